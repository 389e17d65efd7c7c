#include "pipeline/baked_guest_check.hpp"

#include "enablement/guest_layout.hpp"
#include "pipeline/create.hpp"

namespace lume_unlock::pipeline {

Result<BakedGuestCheck> check_baked_guest(guest::GuestSession& session) {
  auto home = session.run("printf '%s' \"$HOME\"");
  if (!home.ok()) {
    return home.error();
  }
  const std::string path =
      enablement::support_dir_of_home(home.value().stdout_text) + "/provenance.json";
  const std::string what = "verifying the guest against its baked record";
  auto text = session.read_file(path);
  if (!text.ok()) {
    return Error(ErrorCategory::verification,
                 what,
                 "the guest has no readable " + path + " (" + text.error().why() + ")",
                 "only images made with `lume-unlock bake` carry the record; bake the image "
                 "again or use `lume-unlock create`");
  }
  auto record = provenance::parse_provenance(text.value());
  if (!record.ok()) {
    return Error(ErrorCategory::verification,
                 what,
                 path + " is not a provenance record: " + record.error().why(),
                 "bake the image again");
  }
  auto report = check_status(session, record.value());
  if (!report.ok()) {
    return report.error();
  }
  return BakedGuestCheck{record.value(), path, report.value()};
}

Result<provenance::Provenance> adopt_baked_record(guest::GuestSession& session,
                                                  const BakedGuestCheck& check,
                                                  const provenance::Provenance& pulled,
                                                  const std::string& state_dir,
                                                  const std::string& now) {
  provenance::Provenance adopted = check.record;
  adopted.vm = pulled.vm;
  adopted.lume_url = pulled.lume_url;
  adopted.image = pulled.image;
  adopted.hardware = pulled.hardware;
  if (!same_provenance(adopted, check.record)) {
    adopted.created_at = now;
    adopted.updated_at = now;
    auto uploaded =
        session.upload(provenance::to_json(adopted).dump(2) + "\n", check.record_path, 0644);
    if (!uploaded.ok()) {
      return uploaded.error();
    }
  }
  auto written = provenance::write_provenance(state_dir, adopted);
  if (!written.ok()) {
    return written.error();
  }
  return adopted;
}

} // namespace lume_unlock::pipeline

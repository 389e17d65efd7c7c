#include "pipeline/baked_guest_check.hpp"

#include "enablement/guest_layout.hpp"

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
  return BakedGuestCheck{record.value(), report.value()};
}

} // namespace lume_unlock::pipeline

#include "pipeline/shared_status.hpp"

#include "guest/guest_records.hpp"

namespace lume_unlock::pipeline {

std::vector<StatusItem> shared_artifact_items(const provenance::Provenance& record,
                                              const provenance::ArtifactFile& file,
                                              const std::map<std::string, std::string>& found) {
  const std::string missing = "missing";
  const std::string& blob = *file.link;
  const auto seen = [&](const std::string& path) {
    const auto it = found.find(path);
    return it == found.end() ? missing : it->second;
  };
  const std::string create_again =
      "'lume-unlock create " + record.vm +
      (record.recipe && record.recipe->path ? " --recipe " + *record.recipe->path : std::string()) +
      "'";

  std::vector<StatusItem> items;
  StatusItem link{"shared link " + file.path, guest::link_state(blob), seen(file.path)};
  if (!link.ok()) {
    link.fix = "run " + create_again + " again: it links the file to the shared cache";
  }
  items.push_back(std::move(link));

  StatusItem bytes{"shared file " + file.path + " (the host's cached blob, seen at " + blob + ")",
                   file.sha256,
                   seen(blob)};
  if (bytes.found == missing) {
    bytes.fix = "the VM runs without the host's artifact cache shared: stop it ('lume stop " +
                record.vm + "') and run " + create_again + ", which starts it with the share";
  } else if (!bytes.ok()) {
    bytes.fix = "the cached blob changed on the host since it was verified: run " + create_again +
                " again, which fetches and verifies it anew";
  }
  items.push_back(std::move(bytes));
  return items;
}

} // namespace lume_unlock::pipeline

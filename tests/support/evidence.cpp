#include "support/evidence.hpp"

#include <filesystem>

namespace lume_unlock::test {

namespace fs = std::filesystem;

std::optional<std::string> find_evidence(const std::string& name) {
  for (const char* root : {LUME_UNLOCK_EVIDENCE_DIRS}) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
      continue;
    }
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->path().filename() == name) {
        return it->path().string();
      }
    }
  }
  return std::nullopt;
}

std::string evidence_places() {
  return LUME_UNLOCK_EVIDENCE_DIRS_TEXT;
}

} // namespace lume_unlock::test

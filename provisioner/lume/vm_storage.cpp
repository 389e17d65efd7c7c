#include "lume/vm_storage.hpp"

#include "util/atomic_file.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace lume_unlock::lume {

std::string vm_storage_root() {
  if (const char* home = std::getenv(k_vm_storage_variable); home != nullptr && *home != '\0') {
    return home;
  }
  const char* user_home = std::getenv("HOME");
  return std::string(user_home != nullptr ? user_home : "") + "/.lume";
}

std::string vm_directory(const std::string& root, const std::string& vm) {
  return root + "/" + vm;
}

Result<std::string> read_manifest_digest(const std::string& root, const std::string& vm) {
  const std::string path = vm_directory(root, vm) + "/.manifest-digest";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Error(ErrorCategory::failure,
                 "reading '" + path + "'",
                 "the file does not exist (Lume writes it only after a successful registry pull)",
                 std::string("check ") + k_vm_storage_variable +
                     " (Lume's VM directory root, default ~/.lume)");
  }
  return util::read_file(path);
}

} // namespace lume_unlock::lume

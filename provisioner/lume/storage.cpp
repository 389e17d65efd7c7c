#include "lume/client.hpp"
#include "util/atomic_file.hpp"
#include "util/text.hpp"

#include <cstdlib>
#include <filesystem>
#include <set>
#include <system_error>
#include <variant>

namespace lume_unlock::lume {

namespace {

/// Lume stores paths as written ("~/.lume") and expands the tilde against its own home.
std::string expand_home(const std::string& path) {
  if (path == "~" || util::starts_with(path, "~/")) {
    const char* home = std::getenv("HOME");
    return std::string(home != nullptr ? home : "") + path.substr(1);
  }
  return path;
}

/// The path of location `location` (a name Lume lists, or a direct path).
Result<std::string> location_path(const LumeConfig& config, const std::string& location) {
  if (!location.empty() && location.front() == '/') {
    return location; // a VM addressed by a direct storage path
  }
  for (const auto& candidate : config.vm_locations) {
    if (candidate.name == location) {
      return expand_home(candidate.path);
    }
  }
  return Error(ErrorCategory::lume_api,
               "finding Lume's storage location '" + location + "'",
               "GET /lume/config lists no location of that name",
               "check Lume's locations (`lume config storage list`)");
}

} // namespace

Result<std::string> default_location_path(LumeApi& lume) {
  LUME_UNLOCK_TRY_ASSIGN(auto config, lume.config());
  return location_path(config, config.default_location_name);
}

Result<std::string> vm_directory(LumeApi& lume, const std::string& vm) {
  LUME_UNLOCK_TRY_ASSIGN(auto config, lume.config());
  std::string location = config.default_location_name;
  auto found = lume.find(vm);
  if (found.ok() && found.value()) {
    if (const auto* details = std::get_if<VmDetails>(&*found.value());
        details != nullptr && !details->location_name.empty()) {
      location = details->location_name;
    }
  }
  LUME_UNLOCK_TRY_ASSIGN(auto root, location_path(config, location));
  return root + "/" + vm;
}

Result<std::string> read_manifest_digest(const std::string& vm_dir) {
  const std::string path = vm_dir + "/.manifest-digest";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Error(ErrorCategory::failure,
                 "reading '" + path + "'",
                 "the file does not exist (Lume writes it only after a successful registry pull)",
                 "check that the VM was pulled from a registry by this Lume (`lume config storage "
                 "list` shows where Lume keeps VMs)");
  }
  return util::read_file(path);
}

namespace {

/// Foundation's lastPathComponent of a file URL made from `path`: trailing slashes do not
/// count, and the root's is "/".
std::string last_component(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') {
    path.remove_suffix(1);
  }
  if (path == "/") {
    return "/";
  }
  const auto slash = path.find_last_of('/');
  const std::string_view last = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return std::string(last);
}

} // namespace

std::vector<std::string> share_entry_names(const std::vector<SharedDirectory>& shared) {
  std::set<std::string> taken = {k_live_share_placeholder};
  std::vector<std::string> names;
  for (const auto& directory : shared) {
    std::string base = last_component(directory.host_path);
    if (base.empty()) {
      base = "Shared Folder";
    }
    std::string name = base;
    for (int suffix = 2; taken.count(name) != 0; ++suffix) {
      name = base + " (" + std::to_string(suffix) + ")";
    }
    taken.insert(name);
    names.push_back(name);
  }
  return names;
}

std::string guest_path_in_share(std::string_view root,
                                const std::vector<SharedDirectory>& shared,
                                std::size_t index,
                                std::string_view relative) {
  std::string path = std::string(root) + "/" + share_entry_names(shared).at(index);
  if (!relative.empty()) {
    path += "/" + std::string(relative);
  }
  return path;
}

} // namespace lume_unlock::lume

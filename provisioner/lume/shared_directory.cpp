#include "lume/shared_directory.hpp"

#include <set>

namespace lume_unlock::lume {

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

#include "guest_shares.hpp"

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>

namespace lume_sim {

namespace fs = std::filesystem;

namespace {

/// Foundation's lastPathComponent of URL(fileURLWithPath:): trailing slashes do not count, the
/// root's is "/".
std::string last_path_component(std::string path) {
  while (path.size() > 1 && path.back() == '/') {
    path.pop_back();
  }
  if (path == "/") {
    return path;
  }
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

std::vector<std::string> guest_share_names(const std::vector<SharedDirectory>& shared) {
  std::set<std::string> taken = {k_live_share_placeholder};
  std::vector<std::string> names;
  for (const auto& directory : shared) {
    std::string base = last_path_component(directory.host_path);
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

std::string GuestShareView::expose(const std::string& root,
                                   const std::vector<SharedDirectory>& shared,
                                   Exposed& exposed) {
  withdraw(root, exposed);
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) {
    return "cannot create " + root + ": " + ec.message();
  }
  const fs::path placeholder = fs::path(root) / k_live_share_placeholder;
  fs::create_directory(placeholder, ec);
  fs::permissions(placeholder, fs::perms(0555), ec);
  const std::vector<std::string> names = guest_share_names(shared);
  for (std::size_t i = 0; i < shared.size(); ++i) {
    const fs::path entry = fs::path(root) / names[i];
    if (shared[i].read_only) {
      fs::create_directory(entry, ec);
      // A bind mount, then the read-only remount: the kernel refuses RDONLY on the first call.
      if (::mount(shared[i].host_path.c_str(), entry.c_str(), nullptr, MS_BIND, nullptr) == 0) {
        exposed.mounts.push_back(entry.string());
        if (::mount(nullptr, entry.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) !=
            0) {
          return "cannot make " + entry.string() + " read-only: " + std::strerror(errno);
        }
        continue;
      }
      fs::remove(entry, ec);
      exposed.enforced = false;
    }
    fs::create_symlink(shared[i].host_path, entry, ec);
    if (ec) {
      return "cannot expose " + shared[i].host_path + " at " + entry.string() + ": " + ec.message();
    }
  }
  return {};
}

void GuestShareView::withdraw(const std::string& root, Exposed& exposed) {
  for (const auto& mount : exposed.mounts) {
    ::umount2(mount.c_str(), MNT_DETACH);
  }
  exposed.mounts.clear();
  exposed.enforced = true;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return;
  }
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    std::error_code ignored;
    // Only what expose() makes: links, the emptied mount points, the placeholder. Never
    // recurse, so a mount that failed to detach keeps the host's files out of reach.
    if (entry.is_symlink(ignored)) {
      fs::remove(entry.path(), ignored);
    } else {
      fs::permissions(entry.path(), fs::perms::owner_all, fs::perm_options::add, ignored);
      ::rmdir(entry.path().c_str());
    }
  }
}

} // namespace lume_sim

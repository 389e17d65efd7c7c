#pragma once

#include <string>
#include <vector>

namespace lume_sim {

/// One entry of a run request's sharedDirectories, as Lume decodes it (RunVMRequest).
struct SharedDirectory {
  std::string host_path;
  bool read_only = false; ///< `readOnly` absent: false (Lume's default)
};

/// The names a macOS guest sees inside "/Volumes/My Shared Files" for `shared`, in order.
/// Lume 0.5.3 (trycua/cua @ b296ec9c, libs/lume/src/Virtualization/VMVirtualizationService.swift,
/// BaseVirtualizationService.createDirectoryShare, as DarwinVirtualizationService's
/// createConfiguration calls it) puts every automount-tagged directory into ONE
/// VZMultipleDirectoryShare keyed by the host path's lastPathComponent ("Shared Folder" when
/// empty); a key already taken gets " (2)", " (3)"… in request order; on macOS a hidden
/// ".lume-live-share" (an empty read-only folder) is added first and counts as taken.
std::vector<std::string> guest_share_names(const std::vector<SharedDirectory>& shared);

inline constexpr const char* k_live_share_placeholder = ".lume-live-share";

/// A simulation device, not Lume: what the guest's automount shows for a running VM. With
/// --guest-share-root DIR (the guest-sim's "/Volumes/My Shared Files"), expose() makes DIR hold
/// the placeholder and one entry per shared directory under the names above: a read-only share
/// as a read-only bind mount of the host path when lume-sim may mount (root), so a write fails
/// with EROFS as it does on a read-only VirtioFS share; a read-write share (and a read-only one
/// when mounting is refused, which `enforced` then reports) as a symbolic link to it.
class GuestShareView {
public:
  /// Whether read-only shares were mounted read-only (false: links, writes not refused).
  struct Exposed {
    std::vector<std::string> mounts; ///< bind-mount points to unmount on withdraw
    bool enforced = true;
  };
  /// Replaces DIR's contents with the view of `shared`. Returns an empty string, or why not.
  static std::string
  expose(const std::string& root, const std::vector<SharedDirectory>& shared, Exposed& exposed);
  /// Unmounts `exposed.mounts` and empties DIR (the VM stopped: the guest's mount is gone).
  static void withdraw(const std::string& root, Exposed& exposed);
};

} // namespace lume_sim

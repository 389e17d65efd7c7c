#pragma once

// The simulated guest's home as a disk image (lume-sim --guest-home). A real VM's home lives on
// its disk, so it travels with pushed and pulled images; the simulated guest (guest-sim) keeps
// its home in a plain directory, so lume-sim stands in for the disk with an archive of it.
// This is a simulation device, not Lume behaviour: Lume never looks inside disk.img.
//
// Format: a POSIX pax tar (readable with `tar -tvf disk.img`), 512-byte blocks, written and
// read with libarchive (pax where a name needs it, ustar otherwise); only the marker's two blocks
// are composed here, since libarchive writes no global headers.
//   - Block 0 is a pax global header named "lume-sim-guest-home" whose only record is
//     "LUMESIM.guest-home=1"; the format check compares these two blocks byte for byte. Any other
//     disk.img (seeded images hold arbitrary bytes) is not ours.
//   - Then one entry per directory ("dir/", type '5'), regular file ('0') and symlink ('2') of
//     the home, sorted by path (so parents come first), without the home directory itself.
//     Modes keep the permission bits (0777); mtime 0, uid/gid 0, no user or group names, so the
//     same home gives the same bytes. A path or link target longer than 100 bytes is carried by
//     a pax extended header ('x') with a `path` or `linkpath` record.
//   - Two zero blocks end the archive.

#include <filesystem>
#include <stdexcept>
#include <string>

namespace lume_sim {

/// A home that cannot be archived or an archive that cannot be restored; what() names the
/// entry and the reason ("entry '../x' has a '..' component").
struct GuestHomeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Writes the archive of `home` to `out` (through a temporary file renamed over `out`, so a
/// push already reading the old `out` keeps its bytes). Returns the number of entries.
/// Sockets, FIFOs and devices are left out (they are not content a disk image carries). Throws
/// GuestHomeError when `home` is not a directory or a file cannot be read.
std::size_t write_guest_home_archive(const std::filesystem::path& home,
                                     const std::filesystem::path& out);

/// True when `disk` starts with the guest-home archive's global header (the format check).
bool is_guest_home_archive(const std::filesystem::path& disk);

/// Replaces the contents of `home` with the archive in `disk`; `home` itself (sshd's home
/// directory, with its owner and mode) stays. Returns false, leaving `home` alone, when `disk`
/// is not a guest-home archive. The whole archive is checked before anything is removed: no
/// absolute path, no '.' or '..' component, no duplicate, every parent listed earlier as a
/// directory, no symlink whose target is absolute or leads out of `home`, only the three entry
/// types. Nothing is written through a symlink. When run as root, extracted entries are given
/// the owner of `home` (guest-sim's guest user). Throws GuestHomeError on a malformed or unsafe
/// archive (then `home` is untouched) or when removing or writing fails.
bool restore_guest_home(const std::filesystem::path& disk, const std::filesystem::path& home);

} // namespace lume_sim

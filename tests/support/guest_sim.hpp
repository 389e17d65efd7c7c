#pragma once

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::test {

/// What `guest-sim start` reported (its one JSON line).
struct GuestSimInfo {
  int port = 0;
  std::string user;
  std::optional<std::string> password; ///< absent when guest-sim runs key-only (not root)
  std::string home;
  /// The guest's stand-in for "/Volumes/My Shared Files", where lume-sim's --guest-share-root
  /// exposes a running VM's shared directories.
  std::string shared_files;
  int pid = 0;
};

/// tests/sim/guest-sim driven from a test: start() runs `guest-sim start --dir DIR`, stop() (and
/// the destructor) `guest-sim stop --dir DIR`. DIR is the caller's (usually a TempDir).
class GuestSim {
public:
  explicit GuestSim(std::string dir);
  ~GuestSim();
  GuestSim(const GuestSim&) = delete;
  GuestSim& operator=(const GuestSim&) = delete;

  /// Starts it with extra arguments (e.g. {"--port", "2222", "--new-host-key"}). Returns an
  /// explanation when it could not start (for LUME_UNLOCK_REQUIRE), nullopt on success.
  std::optional<std::string> start(const std::vector<std::string>& extra = {});
  /// Stops sshd, its sessions and launchctl jobs. Returns guest-sim's exit status.
  int stop();

  bool started() const { return m_started; }
  const GuestSimInfo& info() const { return m_info; }
  const std::string& dir() const { return m_dir; }
  /// Path of guest-sim's script.
  static std::string script();

private:
  std::string m_dir;
  GuestSimInfo m_info;
  bool m_started = false;
};

} // namespace lume_unlock::test

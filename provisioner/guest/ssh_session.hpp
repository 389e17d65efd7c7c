#pragma once

#include "guest/session.hpp"
#include "util/result.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

struct ssh_channel_struct; // libssh's channel type, kept out of this header

namespace lume_unlock::guest {

/// The per-VM files in the host's state directory.
struct VmKeyPaths {
  std::string directory;   ///< <state>/vms/<vm>
  std::string known_host;  ///< the pinned host key: "<type> <base64>\n"
  std::string private_key; ///< OpenSSH-format ed25519 private key, mode 0600
  std::string public_key;  ///< "<type> <base64> lume-unlock@<vm>\n"
};

/// The paths for `vm`; a usage error when the name could escape <state>/vms/.
Result<VmKeyPaths> vm_key_paths(const std::string& state_dir, const std::string& vm);

/// "SHA256:<base64>" of a pinned "<type> <base64>" line; "(unreadable pin)" when it is not one.
std::string pinned_fingerprint(const std::string& line);

/// Where and as whom to reach one VM's guest, and what to trust.
struct SshSessionOptions {
  std::string vm;   ///< the Lume VM name: names the per-VM state and every error
  std::string host; ///< the guest's address (Lume's ipAddress)
  int port = 22;
  std::string user = "lume";
  std::string state_dir; ///< --state-dir: vm_key_paths() are below it
  /// First-contact password (secret: never logged, never in an error). Empty = key auth only.
  std::string password;
  /// The environment variable the password came from, named in hints (never its value).
  std::string password_env = "LUME_UNLOCK_GUEST_PASSWORD";
  /// False when `password` is the image default because the variable was unset (for messages).
  bool password_from_environment = false;
  bool accept_new_host_key = false; ///< replace a pinned host key that no longer matches
  /// Limit for TCP connect plus the SSH handshake, and for each blocking protocol step.
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds command_timeout{0}; ///< limit for one remote command; zero = none
  /// Limit for what one remote command writes to stdout, and again to stderr: run() collects the
  /// output in memory, and 64 MiB is far above anything lume-unlock or `exec` reads back.
  std::size_t max_output_bytes = 64u << 20;
  /// send_file streams files of at least this size through an exec channel (the bytes flow
  /// without waiting for each write's answer, unlike libssh 0.10's sftp_write); smaller files go
  /// over SFTP, where no guest process is started per file.
  std::uint64_t stream_min_bytes = 4u << 20;
};

/// The guest connection options of DESIGN §9, accepted after the name of every command that
/// reaches a guest (registered by cli/commands.hpp).
struct ConnectionOptions {
  std::string user = "lume";                               ///< --ssh-user
  int port = 22;                                           ///< --ssh-port
  std::string password_env = "LUME_UNLOCK_GUEST_PASSWORD"; ///< --ssh-password-env VAR
  bool accept_new_host_key = false;                        ///< --ssh-accept-new-host-key
};

/// The image's default guest password, used when the variable named by --ssh-password-env is
/// unset (Lume's unattended setup creates lume/lume).
inline constexpr const char* k_default_guest_password = "lume";

/// Session options for `vm` at `host`: the password is read here from the environment variable
/// the options name (the image default when it is unset or empty), never from argv.
SshSessionOptions session_options(const ConnectionOptions& options,
                                  const std::string& vm,
                                  const std::string& host,
                                  const std::string& state_dir);

/// How a connection logged in. keyboard_interactive: the password answered the guest's prompt
/// (macOS sshd with PAM may offer only that method); none: the guest asked for nothing.
enum class AuthMethod { public_key, password, keyboard_interactive, none };

/// A libssh session to one guest, reused for a whole operation (one TCP connection, one SFTP
/// channel opened on first use; each run() is one exec channel). Not thread-safe.
///
/// connect(): TCP + handshake within connect_timeout; the host key is pinned on first use and a
/// different key is refused (unless accept_new_host_key); then the per-VM key is tried, and if
/// there is none or the guest rejects it, the password is used and the per-VM key (generated on
/// first need) is appended to the guest's ~/.ssh/authorized_keys (idempotent, 700/600), so the
/// next connection authenticates by key. Every failure is an Error of category guest naming
/// user@host:port and the VM, the cause and a hint.
class SshSession final : public GuestSession {
public:
  static Result<std::unique_ptr<SshSession>> connect(const SshSessionOptions& options);
  ~SshSession() override;
  SshSession(const SshSession&) = delete;
  SshSession& operator=(const SshSession&) = delete;

  Result<CommandResult> run(const std::string& command) override;
  /// One SFTP transfer to "<dir>/.<name>.lume-unlock-<random>.tmp" plus ONE remote command that
  /// checks `shasum -a 256`, chmods and renames (and removes the temporary on any failure).
  Status upload(std::string_view bytes, const std::string& remote_path, mode_t mode) override;
  /// Files of at least stream_min_bytes: ONE exec channel running `cat`, fed as fast as the
  /// channel's window allows; smaller files: one SFTP transfer. Either way a transfer, not a
  /// command.
  Result<std::uint64_t> send_file(const std::string& local_path,
                                  const std::string& remote_path,
                                  const std::function<void(std::uint64_t)>& sent) override;
  Result<std::string> read_file(const std::string& remote_path, std::size_t max_bytes) override;
  Result<std::string>
  read_range(const std::string& remote_path, std::uint64_t offset, std::size_t length) override;
  std::uint64_t command_count() const override { return m_command_count; }

  /// SFTP transfers (one per upload, read_file or small send_file) so far.
  std::uint64_t sftp_transfer_count() const { return m_sftp_transfer_count; }
  /// Files streamed through an exec channel by send_file so far.
  std::uint64_t stream_transfer_count() const { return m_stream_transfer_count; }
  AuthMethod auth_method() const { return m_auth_method; }
  /// True when this connection installed the per-VM key in the guest.
  bool installed_key() const { return m_installed_key; }
  /// "SHA256:<base64>" of the guest's host key.
  const std::string& host_key_fingerprint() const { return m_host_key_fingerprint; }

private:
  struct Impl;
  explicit SshSession(std::unique_ptr<Impl> impl);
  Error failure(const std::string& what, const std::string& why, const std::string& hint) const;
  Status ensure_sftp();
  Status check_host_key();
  Status authenticate();
  Status install_per_vm_key();
  /// Opens `channel` and starts `command` in it; errors name `what`.
  Status
  start_command(ssh_channel_struct* channel, const std::string& command, const std::string& what);
  /// Reads a started command's output until it ends (within the options' limits), and its exit
  /// status.
  Result<CommandResult> collect_output(ssh_channel_struct* channel, const std::string& what);
  /// send_file through an exec channel, from the open host file `input` of `size` bytes.
  Result<std::uint64_t> stream_file(int input,
                                    std::uint64_t size,
                                    const std::string& local_path,
                                    const std::string& remote_path,
                                    const std::string& what,
                                    const std::function<void(std::uint64_t)>& sent);

  std::unique_ptr<Impl> m_impl;
  std::uint64_t m_command_count = 0;
  std::uint64_t m_sftp_transfer_count = 0;
  std::uint64_t m_stream_transfer_count = 0;
  AuthMethod m_auth_method = AuthMethod::public_key;
  bool m_installed_key = false;
  std::string m_host_key_fingerprint;
};

} // namespace lume_unlock::guest

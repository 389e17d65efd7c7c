#pragma once

#include "guest/session.hpp"
#include "guest/vm_key_paths.hpp"
#include "util/result.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

struct ssh_key_struct;     // libssh's key type, kept out of this header
struct ssh_channel_struct; // and its channel type

namespace lume_unlock::guest {

/// Where and as whom to reach one VM's guest, and what to trust.
struct SshSessionOptions {
  std::string vm;   ///< the Lume VM name: names the per-VM state and every error
  std::string host; ///< the guest's address (Lume's ipAddress)
  int port = 22;
  std::string user = "lume";
  /// The host's state directory (--state-dir); the VM's files live in <state_dir>/vms/<vm>/:
  /// known_host (the pinned host key) and ssh_ed25519(.pub) (the per-VM client key, 0600).
  std::string state_dir;
  /// First-contact password (secret: never logged, never in an error). Empty = key auth only.
  std::string password;
  /// The environment variable the password came from, named in hints (never its value).
  std::string password_env = "LUME_UNLOCK_GUEST_PASSWORD";
  /// False when `password` is the image default because the variable was unset (for messages).
  bool password_from_environment = false;
  /// Replace a pinned host key that no longer matches (--ssh-accept-new-host-key).
  bool accept_new_host_key = false;
  /// Limit for TCP connect plus the SSH handshake, and for each blocking protocol step.
  std::chrono::milliseconds connect_timeout{10000};
  /// Limit for one remote command; zero = none.
  std::chrono::milliseconds command_timeout{0};
  /// Limit for what one remote command writes to stdout, and again to stderr: run() collects the
  /// output in memory, and 64 MiB is far above anything lume-unlock or `exec` reads back.
  std::size_t max_output_bytes = 64u << 20;
  /// send_file streams files of at least this size through an exec channel into a command in
  /// the guest (the bytes flow without waiting for each write's answer, unlike libssh 0.10's
  /// sftp_write); smaller files go over SFTP, where no guest process is started per file. The
  /// caller checks what arrived in one command afterwards (install_streamed_payload).
  std::uint64_t stream_min_bytes = 4u << 20;
  /// Streamed files are hashed in the guest while they arrive (`tee FILE | shasum -a 256`), and
  /// send_file returns the digest, instead of being stored by `cat` and hashed by the caller's
  /// check afterwards. That overlap pays only when the guest has cores to spare for tee and
  /// shasum besides sshd: on guest-sim, which shares the host's 2 cores, 256 MiB took 4.0-5.3 s
  /// streamed through tee | shasum against 2.6-2.9 s stored, then hashed from the page cache.
  bool hash_while_streaming = false;
};

/// How the session authenticated.
/// How a connection logged in. keyboard_interactive: the password answered the guest's prompt
/// (macOS sshd with PAM may offer only that method).
enum class AuthMethod {
  public_key,
  password,
  keyboard_interactive,
  none /* the guest asked for nothing */
};

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
  /// Files of at least SshSessionOptions::stream_min_bytes: ONE exec channel running `cat` (or
  /// `tee | shasum -a 256`, returning the guest's digest, with hash_while_streaming), fed as fast
  /// as the channel's window allows. Smaller files: one SFTP transfer, written in chunks as they
  /// are read. Either way it counts as a transfer, not as a command.
  Result<SentFile> send_file(const std::string& local_path,
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
  /// Loads the per-VM key into `key`; with `create`, generates and saves one when missing.
  /// Returns whether a key was loaded.
  Result<bool> load_or_create_key(bool create, ssh_key_struct** key);
  Status install_public_key(const std::string& authorized_line);
  /// Opens `channel` and starts `command` in it; errors name `what`.
  Status
  start_command(ssh_channel_struct* channel, const std::string& command, const std::string& what);
  /// Reads a started command's output until it ends (within the limits of the options) and
  /// its exit status.
  Result<CommandResult> collect_output(ssh_channel_struct* channel, const std::string& what);
  /// send_file over SFTP, from the open host file `input` (closed by the caller).
  Result<SentFile> sftp_send_file(int input,
                                  const std::string& local_path,
                                  const std::string& remote_path,
                                  const std::function<void(std::uint64_t)>& sent);
  /// send_file through an exec channel, from the open host file `input` of `size` bytes.
  Result<SentFile> stream_send_file(int input,
                                    std::uint64_t size,
                                    const std::string& local_path,
                                    const std::string& remote_path,
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

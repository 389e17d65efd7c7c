#include "guest/ssh_session.hpp"

#include "guest/shell_quote.hpp"
#include "util/atomic_file.hpp"
#include "util/private_file.hpp"
#include "util/sha256.hpp"
#include "util/size.hpp"

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

namespace lume_unlock::guest {

namespace {

/// Logs in with keyboard-interactive, answering every hidden prompt (PAM's "Password:") with
/// `password`. Returns libssh's SSH_AUTH_* code; a prompt that echoes (a question other than
/// the password) or more rounds than PAM needs count as SSH_AUTH_DENIED. The password goes only
/// to libssh's answer buffer, never to a message.
int login_keyboard_interactive(ssh_session session, const std::string& password) {
  constexpr int k_max_rounds = 8; // PAM asks once, then may send an empty round; bound a loop
  int rc = ssh_userauth_kbdint(session, nullptr, nullptr);
  for (int round = 0; rc == SSH_AUTH_INFO; ++round) {
    if (round == k_max_rounds) {
      return SSH_AUTH_DENIED;
    }
    const int prompts = ssh_userauth_kbdint_getnprompts(session);
    for (int i = 0; i < prompts; ++i) {
      char echo = 0;
      if (ssh_userauth_kbdint_getprompt(session, static_cast<unsigned>(i), &echo) == nullptr ||
          echo != 0) {
        return SSH_AUTH_DENIED;
      }
      if (ssh_userauth_kbdint_setanswer(session, static_cast<unsigned>(i), password.c_str()) < 0) {
        return SSH_AUTH_ERROR;
      }
    }
    rc = ssh_userauth_kbdint(session, nullptr, nullptr);
  }
  return rc;
}

constexpr std::size_t k_sftp_chunk = 32 * 1024; // well under sftp-server's 256 KiB packet limit
// Streamed writes: libssh 0.10 waits for each write's status, so fewer, larger writes (still
// under the limit, with room for the packet header) carry a file at several times the rate.
constexpr std::size_t k_sftp_write_chunk = 192 * 1024;
const char* const k_override_flag = "--ssh-accept-new-host-key";

/// Owns a libssh key.
struct KeyHandle {
  ssh_key key = nullptr;
  KeyHandle() = default;
  KeyHandle(const KeyHandle&) = delete;
  KeyHandle& operator=(const KeyHandle&) = delete;
  ~KeyHandle() { ssh_key_free(key); }
};

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

/// "SHA256:<base64>", as OpenSSH prints fingerprints.
std::string fingerprint(ssh_key key) {
  unsigned char* hash = nullptr;
  size_t length = 0;
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &length) != 0) {
    return "(unknown)";
  }
  char* text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, length);
  ssh_clean_pubkey_hash(&hash);
  std::string out = text != nullptr ? text : "(unknown)";
  ssh_string_free_char(text);
  return out;
}

/// "<type> <base64>" of a public key.
Result<std::string> public_key_line(ssh_key key) {
  char* b64 = nullptr;
  if (ssh_pki_export_pubkey_base64(key, &b64) != SSH_OK) {
    return Error(ErrorCategory::guest, "cannot export an SSH public key", "libssh refused");
  }
  std::string line = std::string(ssh_key_type_to_char(ssh_key_type(key))) + " " + b64;
  ssh_string_free_char(b64);
  return line;
}

/// The fingerprint of a pinned "<type> <base64>" line.
std::string pinned_fingerprint(const std::string& line) {
  auto space = line.find(' ');
  if (space == std::string::npos) {
    return "(unreadable pin)";
  }
  KeyHandle key;
  if (ssh_pki_import_pubkey_base64(line.substr(space + 1).c_str(),
                                   ssh_key_type_from_name(line.substr(0, space).c_str()),
                                   &key.key) != SSH_OK) {
    return "(unreadable pin)";
  }
  return fingerprint(key.key);
}

std::string sftp_error_text(int code) {
  switch (code) {
  case SSH_FX_EOF:
    return "end of file";
  case SSH_FX_NO_SUCH_FILE:
    return "no such file or directory";
  case SSH_FX_PERMISSION_DENIED:
    return "permission denied";
  case SSH_FX_FAILURE:
    return "the guest's SFTP server reported a failure";
  case SSH_FX_NO_CONNECTION:
    return "no connection";
  case SSH_FX_CONNECTION_LOST:
    return "connection lost";
  case SSH_FX_FILE_ALREADY_EXISTS:
    return "file already exists";
  default:
    return "SFTP error " + std::to_string(code);
  }
}

std::string random_suffix() {
  std::random_device device;
  char text[17];
  std::snprintf(text, sizeof text, "%08x%08x", device(), device());
  return text;
}

} // namespace

Result<VmKeyPaths> vm_key_paths(const std::string& state_dir, const std::string& vm) {
  if (vm.empty() || vm == "." || vm == ".." || vm.find('/') != std::string::npos ||
      vm.find('\0') != std::string::npos) {
    return Error(ErrorCategory::usage,
                 "VM name '" + vm + "'",
                 "not usable as a directory name under the state directory",
                 "use a Lume VM name made of letters, digits, '.', '_' and '-'");
  }
  VmKeyPaths paths;
  paths.directory = state_dir + "/vms/" + vm;
  paths.known_host = paths.directory + "/known_host";
  paths.private_key = paths.directory + "/ssh_ed25519";
  paths.public_key = paths.directory + "/ssh_ed25519.pub";
  return paths;
}

struct SshSession::Impl {
  SshSessionOptions options;
  VmKeyPaths paths;
  ssh_session session = nullptr;
  sftp_session sftp = nullptr;

  ~Impl() {
    if (sftp != nullptr) {
      sftp_free(sftp);
    }
    if (session != nullptr) {
      ssh_disconnect(session);
      ssh_free(session);
    }
  }

  /// "VM 'demo' (lume@127.0.0.1:22)" — who we were talking to, for every error.
  std::string target() const {
    return "VM '" + options.vm + "' (" + options.user + "@" + options.host + ":" +
           std::to_string(options.port) + ")";
  }

  std::string ssh_error() const { return trim(ssh_get_error(session)); }
};

SshSession::SshSession(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
SshSession::~SshSession() = default;

Error SshSession::failure(const std::string& what,
                          const std::string& why,
                          const std::string& hint) const {
  return Error(ErrorCategory::guest, what + " " + m_impl->target(), why, hint);
}

Result<std::unique_ptr<SshSession>> SshSession::connect(const SshSessionOptions& options) {
  LUME_UNLOCK_TRY_ASSIGN(auto paths, vm_key_paths(options.state_dir, options.vm));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->paths = paths;
  impl->session = ssh_new();
  if (impl->session == nullptr) {
    return Error(ErrorCategory::guest,
                 "connecting to " + impl->target(),
                 "libssh could not allocate a session");
  }
  std::unique_ptr<SshSession> self(new SshSession(std::move(impl)));
  Impl& s = *self->m_impl;

  unsigned int port = static_cast<unsigned int>(options.port);
  long seconds = static_cast<long>(options.connect_timeout.count() / 1000);
  long micros = static_cast<long>((options.connect_timeout.count() % 1000) * 1000);
  int no = 0;
  ssh_options_set(s.session, SSH_OPTIONS_HOST, options.host.c_str());
  ssh_options_set(s.session, SSH_OPTIONS_PORT, &port);
  ssh_options_set(s.session, SSH_OPTIONS_USER, options.user.c_str());
  ssh_options_set(s.session, SSH_OPTIONS_TIMEOUT, &seconds);
  ssh_options_set(s.session, SSH_OPTIONS_TIMEOUT_USEC, &micros);
  // Without TCP_NODELAY every small request (an SFTP write, a channel open) waits for the
  // peer's delayed ACK: ~40 ms each, 1 MB/s uploads.
  int yes = 1;
  ssh_options_set(s.session, SSH_OPTIONS_NODELAY, &yes);
  // Our own pin file decides trust; the user's ~/.ssh/config and known_hosts play no part.
  ssh_options_set(s.session, SSH_OPTIONS_PROCESS_CONFIG, &no);
  ssh_options_set(s.session, SSH_OPTIONS_KNOWNHOSTS, "/dev/null");
  ssh_options_set(s.session, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");

  const std::string connecting = "connecting to";
  if (ssh_connect(s.session) != SSH_OK) {
    std::string why = s.ssh_error();
    std::string hint;
    if (why.find("refused") != std::string::npos) {
      hint =
          "nothing listens on port " + std::to_string(options.port) +
          ": check that Remote Login (sshd) is on in the guest and the port (--ssh-port) is right";
    } else if (why.find("imeout") != std::string::npos ||
               why.find("timed out") != std::string::npos) {
      why = "no answer within " + std::to_string(options.connect_timeout.count()) + " ms (" + why +
            ")";
      hint = "check that the VM is running and has finished booting ('lume-unlock status " +
             options.vm + "'), then retry";
    } else {
      hint = "check that the VM is running and reachable from this host, then retry";
    }
    return self->failure(connecting, why, hint);
  }

  LUME_UNLOCK_TRY(self->check_host_key());
  LUME_UNLOCK_TRY(self->authenticate());
  return self;
}

Status SshSession::check_host_key() {
  Impl& s = *m_impl;
  KeyHandle server_key;
  if (ssh_get_server_publickey(s.session, &server_key.key) != SSH_OK) {
    return failure("connecting to",
                   "the guest sent no host key (" + s.ssh_error() + ")",
                   "retry; if it persists the guest's sshd is misconfigured");
  }
  m_host_key_fingerprint = fingerprint(server_key.key);
  LUME_UNLOCK_TRY_ASSIGN(auto offered, public_key_line(server_key.key));
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(s.paths.known_host, ec)) {
    LUME_UNLOCK_TRY_ASSIGN(auto pinned, util::read_file(s.paths.known_host));
    const std::string pinned_line = trim(pinned);
    if (pinned_line == offered) {
      return ok_status();
    }
    if (!s.options.accept_new_host_key) {
      return failure("connecting to",
                     "the guest's host key changed: pinned " + pinned_fingerprint(pinned_line) +
                         " (in '" + s.paths.known_host + "'), offered " + m_host_key_fingerprint,
                     "if VM '" + s.options.vm +
                         "' was recreated or reinstalled on purpose, rerun with " +
                         k_override_flag +
                         " to pin the new key; otherwise another machine may be answering at " +
                         s.options.host);
    }
  }
  LUME_UNLOCK_TRY(util::make_directories(s.paths.directory, 0700));
  return util::write_file_atomic(s.paths.known_host, offered + "\n", 0644);
}

Result<bool> SshSession::load_or_create_key(bool create, ssh_key* key) {
  Impl& s = *m_impl;
  std::error_code ec;
  if (std::filesystem::exists(s.paths.private_key, ec)) {
    LUME_UNLOCK_TRY(util::require_owner_only(s.paths.private_key, "per-VM SSH key"));
    if (ssh_pki_import_privkey_file(s.paths.private_key.c_str(), nullptr, nullptr, nullptr, key) !=
        SSH_OK) {
      return Error(ErrorCategory::guest,
                   "per-VM SSH key '" + s.paths.private_key + "'",
                   "cannot be read as an OpenSSH private key",
                   "move it away; lume-unlock makes a new one at the next password login");
    }
    return true;
  }
  if (!create) {
    return false;
  }
  if (ssh_pki_generate(SSH_KEYTYPE_ED25519, 0, key) != SSH_OK) {
    return Error(ErrorCategory::guest,
                 "per-VM SSH key for VM '" + s.options.vm + "'",
                 "libssh could not generate an ed25519 key");
  }
  char* private_text = nullptr;
  if (ssh_pki_export_privkey_base64(*key, nullptr, nullptr, nullptr, &private_text) != SSH_OK) {
    return Error(ErrorCategory::guest,
                 "per-VM SSH key for VM '" + s.options.vm + "'",
                 "libssh could not export the new key");
  }
  std::string private_pem = private_text;
  ssh_string_free_char(private_text);
  LUME_UNLOCK_TRY_ASSIGN(auto public_line, public_key_line(*key));
  LUME_UNLOCK_TRY(util::make_directories(s.paths.directory, 0700));
  LUME_UNLOCK_TRY(util::write_file_atomic(s.paths.private_key, private_pem, 0600));
  LUME_UNLOCK_TRY(util::write_file_atomic(
      s.paths.public_key, public_line + " lume-unlock@" + s.options.vm + "\n", 0644));
  return true;
}

Status SshSession::authenticate() {
  Impl& s = *m_impl;
  const std::string authenticating = "logging in as '" + s.options.user + "' to";
  int rc = ssh_userauth_none(s.session, nullptr);
  if (rc == SSH_AUTH_ERROR) {
    return failure(authenticating, s.ssh_error(), "retry; the connection was lost during login");
  }
  if (rc == SSH_AUTH_SUCCESS) {
    m_auth_method = AuthMethod::none;
    return ok_status();
  }
  const int methods = ssh_userauth_list(s.session, nullptr);

  KeyHandle key;
  LUME_UNLOCK_TRY_ASSIGN(auto existing, load_or_create_key(false, &key.key));
  bool key_rejected = false;
  if (existing && (methods & SSH_AUTH_METHOD_PUBLICKEY) != 0) {
    rc = ssh_userauth_publickey(s.session, nullptr, key.key);
    if (rc == SSH_AUTH_SUCCESS) {
      m_auth_method = AuthMethod::public_key;
      return ok_status();
    }
    if (rc == SSH_AUTH_ERROR) {
      return failure(authenticating, s.ssh_error(), "retry; the connection was lost during login");
    }
    key_rejected = true;
  }

  const std::string key_state =
      existing ? (key_rejected ? "the guest rejected the per-VM key '" + s.paths.private_key + "'"
                               : "the guest does not offer public-key login")
               : "there is no per-VM key yet";
  // macOS sshd with PAM may offer the password only as keyboard-interactive.
  const bool by_password = (methods & SSH_AUTH_METHOD_PASSWORD) != 0;
  const bool by_prompt = !by_password && (methods & SSH_AUTH_METHOD_INTERACTIVE) != 0;
  if (s.options.password.empty() || (!by_password && !by_prompt)) {
    return failure(
        authenticating,
        key_state + (s.options.password.empty() ? " and no password was given"
                                                : " and the guest does not accept passwords"),
        "enable password login for '" + s.options.user + "' in the guest once, or add '" +
            s.paths.public_key + "' to its ~/.ssh/authorized_keys");
  }
  rc = by_password ? ssh_userauth_password(s.session, nullptr, s.options.password.c_str())
                   : login_keyboard_interactive(s.session, s.options.password);
  if (rc == SSH_AUTH_ERROR) {
    return failure(authenticating, s.ssh_error(), "retry; the connection was lost during login");
  }
  if (rc != SSH_AUTH_SUCCESS) {
    const std::string source =
        s.options.password_from_environment
            ? "the password in $" + s.options.password_env
            : "the image default password ($" + s.options.password_env + " is not set)";
    return failure(
        authenticating,
        key_state + ", and the guest rejected " + source,
        "put the guest user's password in $" + s.options.password_env +
            " (or name another variable with --ssh-password-env; --ssh-user sets the user)");
  }
  m_auth_method = by_password ? AuthMethod::password : AuthMethod::keyboard_interactive;

  // First contact: make (or reuse) the per-VM key and install it for the next connections.
  KeyHandle install_key;
  LUME_UNLOCK_TRY(load_or_create_key(true, &install_key.key));
  LUME_UNLOCK_TRY_ASSIGN(auto line, public_key_line(install_key.key));
  return install_public_key(line + " lume-unlock@" + s.options.vm);
}

Status SshSession::install_public_key(const std::string& authorized_line) {
  const std::string key_part = authorized_line.substr(0, authorized_line.rfind(' '));
  auto quoted_line = shell_quote(authorized_line);
  auto quoted_key = shell_quote(key_part);
  if (!quoted_line.ok() || !quoted_key.ok()) {
    return quoted_line.ok() ? quoted_key.error() : quoted_line.error();
  }
  // Idempotent: the key is appended only when absent; a last line without newline is closed.
  const std::string command =
      "umask 077 && mkdir -p \"$HOME/.ssh\" && chmod 700 \"$HOME/.ssh\" && "
      "f=\"$HOME/.ssh/authorized_keys\" && touch \"$f\" && chmod 600 \"$f\" && "
      "if ! grep -qF " +
      quoted_key.value() +
      " \"$f\"; then "
      "if [ -s \"$f\" ] && [ -n \"$(tail -c 1 \"$f\")\" ]; then echo >> \"$f\"; fi; "
      "printf '%s\\n' " +
      quoted_line.value() + " >> \"$f\"; fi";
  LUME_UNLOCK_TRY_ASSIGN(auto result, run(command));
  if (result.exit_status != 0) {
    return failure("installing the per-VM key in ~/.ssh/authorized_keys on",
                   "exit status " + std::to_string(result.exit_status) + ": " +
                       trim(result.stderr_text),
                   "check that the guest user's home is writable, then retry");
  }
  m_installed_key = true;
  return ok_status();
}

Result<CommandResult> SshSession::run(const std::string& command) {
  Impl& s = *m_impl;
  ++m_command_count;
  const std::string what = "running a command on";
  ssh_channel channel = ssh_channel_new(s.session);
  if (channel == nullptr) {
    return failure(what, s.ssh_error(), "retry; the SSH connection may have dropped");
  }
  struct ChannelGuard {
    ssh_channel channel;
    ~ChannelGuard() {
      ssh_channel_close(channel);
      ssh_channel_free(channel);
    }
  } guard{channel};
  if (ssh_channel_open_session(channel) != SSH_OK ||
      ssh_channel_request_exec(channel, command.c_str()) != SSH_OK) {
    return failure(
        what, "cannot start it: " + s.ssh_error(), "retry; the SSH connection may have dropped");
  }
  ssh_channel_send_eof(channel); // no stdin: commands that read it see end of file

  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() + s.options.command_timeout;
  const std::size_t limit = s.options.max_output_bytes;
  char buffer[16384];
  while (true) {
    int out = ssh_channel_read_timeout(channel, buffer, sizeof buffer, 0, 50);
    if (out > 0) {
      result.stdout_text.append(buffer, static_cast<std::size_t>(out));
    }
    int err = ssh_channel_read_nonblocking(channel, buffer, sizeof buffer, 1);
    if (err > 0) {
      result.stderr_text.append(buffer, static_cast<std::size_t>(err));
    }
    if (out == SSH_ERROR || err == SSH_ERROR) {
      return failure(what,
                     "the connection broke while it ran: " + s.ssh_error(),
                     "retry; check that the VM is still running");
    }
    if (result.stdout_text.size() > limit || result.stderr_text.size() > limit) {
      // Closing the channel (the guard) ends the command's output; nothing more is read.
      return failure(what,
                     std::string("its ") +
                         (result.stdout_text.size() > limit ? "standard output" : "error output") +
                         " passed the limit of " + util::describe_limit(limit),
                     "run it with 'lume-unlock ssh " + s.options.vm +
                         " -- COMMAND' and send its output to a file in the guest");
    }
    if (out <= 0 && err <= 0 && ssh_channel_is_eof(channel)) {
      break;
    }
    if (s.options.command_timeout.count() > 0 && std::chrono::steady_clock::now() > deadline) {
      return failure(what,
                     "no end after " + std::to_string(s.options.command_timeout.count()) + " ms",
                     "the command may be waiting for input or hung; check it in the guest");
    }
  }
  result.exit_status = ssh_channel_get_exit_status(channel);
  return result;
}

Status SshSession::ensure_sftp() {
  Impl& s = *m_impl;
  if (s.sftp != nullptr) {
    return ok_status();
  }
  s.sftp = sftp_new(s.session);
  if (s.sftp == nullptr || sftp_init(s.sftp) != SSH_OK) {
    std::string why = s.ssh_error();
    if (s.sftp != nullptr) {
      sftp_free(s.sftp);
      s.sftp = nullptr;
    }
    return failure("starting SFTP on",
                   "cannot start the SFTP subsystem: " + why,
                   "enable the sftp subsystem in the guest's sshd (macOS has it by default)");
  }
  return ok_status();
}

Status SshSession::upload(std::string_view bytes, const std::string& remote_path, mode_t mode) {
  Impl& s = *m_impl;
  const std::string what = "upload of '" + remote_path + "' to";
  const auto slash = remote_path.rfind('/');
  const std::string directory = slash == std::string::npos ? "" : remote_path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? remote_path : remote_path.substr(slash + 1);
  if (name.empty()) {
    return Error(ErrorCategory::usage,
                 "upload of '" + remote_path + "'",
                 "the path names a directory, not a file");
  }
  const std::string temporary = directory + "." + name + ".lume-unlock-" + random_suffix() + ".tmp";
  auto quoted_tmp = shell_quote(temporary);
  auto quoted_dst = shell_quote(remote_path);
  if (!quoted_tmp.ok() || !quoted_dst.ok()) {
    return quoted_tmp.ok() ? quoted_dst.error() : quoted_tmp.error();
  }
  LUME_UNLOCK_TRY(ensure_sftp());

  ++m_sftp_transfer_count;
  sftp_file file = sftp_open(s.sftp, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (file == nullptr && sftp_get_error(s.sftp) == SSH_FX_NO_SUCH_FILE && !directory.empty()) {
    // The parent directory is missing: one extra command, only on the first upload into it.
    LUME_UNLOCK_TRY_ASSIGN(auto made, run("mkdir -p " + shell_quote(directory).value()));
    if (made.exit_status != 0) {
      return failure(what,
                     "cannot create its directory: " + trim(made.stderr_text),
                     "check the path and the guest user's permissions");
    }
    file = sftp_open(s.sftp, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  }
  if (file == nullptr) {
    return failure(what,
                   "cannot create the temporary file '" + temporary +
                       "': " + sftp_error_text(sftp_get_error(s.sftp)),
                   "check that the directory exists and the guest user may write to it");
  }
  std::size_t offset = 0;
  while (offset < bytes.size()) {
    const std::size_t count = std::min(k_sftp_chunk, bytes.size() - offset);
    const ssize_t written = sftp_write(file, bytes.data() + offset, count);
    if (written <= 0) {
      const std::string why = "writing failed after " + std::to_string(offset) + " of " +
                              std::to_string(bytes.size()) + " bytes: " + s.ssh_error();
      sftp_close(file);
      sftp_unlink(s.sftp, temporary.c_str()); // best effort; the connection may be gone
      return failure(
          what,
          why,
          "the previous file is untouched; check that the VM is still running and retry");
    }
    offset += static_cast<std::size_t>(written);
  }
  if (sftp_close(file) != SSH_NO_ERROR) {
    const std::string why = "closing the temporary file failed: " + s.ssh_error();
    sftp_unlink(s.sftp, temporary.c_str());
    return failure(what, why, "the previous file is untouched; check the guest's free disk space");
  }

  // ONE command: verify the digest in the guest, then chmod and rename; any failure removes the
  // temporary and leaves the previous file. `mv` onto a directory would move *into* it, so that
  // case is refused first.
  char mode_text[8];
  std::snprintf(mode_text, sizeof mode_text, "%04o", static_cast<unsigned>(mode & 07777));
  const std::string expected = util::sha256_hex(bytes);
  const std::string command =
      "t=" + quoted_tmp.value() + "; d=" + quoted_dst.value() +
      "; s=$(shasum -a 256 \"$t\" 2>&1) || { rm -f \"$t\"; printf 'shasum failed: %s\\n' \"$s\" "
      ">&2; exit 1; }"
      "; s=${s%% *}"
      "; if [ \"$s\" != " +
      expected +
      " ]; then rm -f \"$t\"; "
      "printf 'SHA-256 in the guest is %s, expected " +
      expected +
      "\\n' \"$s\" >&2; exit 1; fi"
      "; if [ -d \"$d\" ]; then rm -f \"$t\"; echo 'the target is a directory' >&2; exit 1; fi"
      "; chmod " +
      mode_text + " \"$t\" && mv -f \"$t\" \"$d\" || { rm -f \"$t\"; exit 1; }";
  auto checked = run(command);
  if (!checked.ok()) {
    return checked.error().with_hint(
        "the previous file is untouched; check that the VM is still running and retry");
  }
  if (checked.value().exit_status != 0) {
    std::string why = trim(checked.value().stderr_text);
    return failure(what,
                   why.empty() ? "verify-and-rename exited with status " +
                                     std::to_string(checked.value().exit_status)
                               : why,
                   "the previous file is untouched; check the path and free space in the guest");
  }
  return ok_status();
}

Status SshSession::send_file(const std::string& local_path,
                             const std::string& remote_path,
                             const std::function<void(std::uint64_t)>& sent) {
  Impl& s = *m_impl;
  const std::string what = "upload of '" + local_path + "' as '" + remote_path + "' to";
  const int input = ::open(local_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (input < 0) {
    return Error(ErrorCategory::failure,
                 "reading '" + local_path + "'",
                 std::strerror(errno),
                 "check that the file exists and is readable");
  }
  const auto close_input = [input] { ::close(input); };
  if (auto ready = ensure_sftp(); !ready.ok()) {
    close_input();
    return ready;
  }
  ++m_sftp_transfer_count;
  sftp_file file = sftp_open(s.sftp, remote_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (file == nullptr) {
    close_input();
    return failure(what,
                   "cannot create it: " + sftp_error_text(sftp_get_error(s.sftp)),
                   "check that the directory exists and the guest user may write to it");
  }
  std::vector<char> buffer(k_sftp_write_chunk);
  std::uint64_t done = 0;
  for (;;) {
    const ssize_t got = ::read(input, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      const std::string why = std::strerror(errno);
      sftp_close(file);
      close_input();
      return Error(ErrorCategory::failure,
                   "reading '" + local_path + "' after " + std::to_string(done) + " bytes",
                   why);
    }
    if (got == 0) {
      break;
    }
    std::size_t offset = 0;
    while (offset < static_cast<std::size_t>(got)) {
      const ssize_t written =
          sftp_write(file, buffer.data() + offset, static_cast<std::size_t>(got) - offset);
      if (written <= 0) {
        const std::string why =
            "writing failed after " + std::to_string(done + offset) + " bytes: " + s.ssh_error();
        sftp_close(file);
        close_input();
        return failure(what, why, "check that the VM is still running and has free disk space");
      }
      offset += static_cast<std::size_t>(written);
    }
    done += static_cast<std::uint64_t>(got);
    if (sent) {
      sent(done);
    }
  }
  close_input();
  if (sftp_close(file) != SSH_NO_ERROR) {
    return failure(
        what, "closing the file failed: " + s.ssh_error(), "check the guest's free disk space");
  }
  return ok_status();
}

Result<std::string> SshSession::read_file(const std::string& remote_path, std::size_t max_bytes) {
  // One byte past the limit tells "exactly at the limit" from "larger" without reading more.
  const std::size_t probe = max_bytes < std::string().max_size() ? max_bytes + 1 : max_bytes;
  LUME_UNLOCK_TRY_ASSIGN(auto content, read_range(remote_path, 0, probe));
  if (content.size() > max_bytes) {
    return failure("reading '" + remote_path + "' from",
                   "it is larger than the limit of " + util::describe_limit(max_bytes),
                   "a file this large was not written by lume-unlock; check it with "
                   "'lume-unlock ssh " +
                       m_impl->options.vm + " -- ls -l PATH'");
  }
  return content;
}

Result<std::string>
SshSession::read_range(const std::string& remote_path, std::uint64_t offset, std::size_t length) {
  Impl& s = *m_impl;
  const std::string what = "reading '" + remote_path + "' from";
  LUME_UNLOCK_TRY(ensure_sftp());
  ++m_sftp_transfer_count;
  sftp_file file = sftp_open(s.sftp, remote_path.c_str(), O_RDONLY, 0);
  if (file == nullptr) {
    return failure(what,
                   sftp_error_text(sftp_get_error(s.sftp)),
                   "check the path with 'lume-unlock ssh " + s.options.vm + " -- ls -l PATH'");
  }
  if (offset != 0 && sftp_seek64(file, offset) != 0) {
    const std::string why =
        "cannot seek to offset " + std::to_string(offset) + ": " + s.ssh_error();
    sftp_close(file);
    return failure(what, why, "check that the VM is still running and retry");
  }
  std::string content;
  char buffer[k_sftp_chunk];
  while (content.size() < length) {
    const ssize_t got = sftp_read(file, buffer, std::min(sizeof buffer, length - content.size()));
    if (got == 0) {
      break;
    }
    if (got < 0) {
      const std::string why =
          "reading failed after " + std::to_string(content.size()) + " bytes: " + s.ssh_error();
      sftp_close(file);
      return failure(what, why, "check that the VM is still running and retry");
    }
    content.append(buffer, static_cast<std::size_t>(got));
  }
  sftp_close(file);
  return content;
}

} // namespace lume_unlock::guest

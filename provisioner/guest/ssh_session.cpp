// SshSession's connection: TCP and the handshake, the pinned host key, logging in (per-VM key,
// else the password once, which installs the key), and the per-VM files on the host.
#include "guest/ssh_session.hpp"

#include "guest/shell_quote.hpp"
#include "guest/ssh_internal.hpp"
#include "util/atomic_file.hpp"
#include "util/ecdsa_key.hpp"
#include "util/text.hpp"

#include <cstdlib>
#include <filesystem>

namespace lume_unlock::guest {

namespace {

/// Owns a libssh key (freed with it).
struct KeyHandle {
  ssh_key key = nullptr;
  KeyHandle() = default;
  KeyHandle(const KeyHandle&) = delete;
  KeyHandle& operator=(const KeyHandle&) = delete;
  ~KeyHandle() { ssh_key_free(key); }
};

/// "SHA256:<base64>", as OpenSSH prints fingerprints; "(unknown)" when libssh cannot hash it.
std::string key_fingerprint(ssh_key key) {
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

/// "<type> <base64>": the line pinned in known_host and, with a comment, appended to the guest's
/// authorized_keys.
Result<std::string> public_key_line(ssh_key key) {
  char* b64 = nullptr;
  if (ssh_pki_export_pubkey_base64(key, &b64) != SSH_OK) {
    return Error(ErrorCategory::guest, "cannot export an SSH public key", "libssh refused");
  }
  std::string line = std::string(ssh_key_type_to_char(ssh_key_type(key))) + " " + b64;
  ssh_string_free_char(b64);
  return line;
}

} // namespace

std::string pinned_fingerprint(const std::string& line) {
  auto space = line.find(' ');
  KeyHandle key;
  if (space == std::string::npos ||
      ssh_pki_import_pubkey_base64(line.substr(space + 1).c_str(),
                                   ssh_key_type_from_name(line.substr(0, space).c_str()),
                                   &key.key) != SSH_OK) {
    return "(unreadable pin)";
  }
  return key_fingerprint(key.key);
}

namespace {

/// Keyboard-interactive login answering every hidden prompt (PAM's "Password:") with `password`:
/// macOS sshd with PAM may offer the password only this way. A prompt that echoes (a question
/// other than the password) or more rounds than PAM needs count as SSH_AUTH_DENIED.
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

/// Loads the per-VM key into `key`; with `create`, generates and saves one when missing.
/// Returns whether a key was loaded.
Result<bool> load_key(const VmKeyPaths& paths, const std::string& vm, bool create, ssh_key* key) {
  std::error_code ec;
  if (std::filesystem::exists(paths.private_key, ec)) {
    LUME_UNLOCK_TRY(util::require_owner_only(paths.private_key, "per-VM SSH key"));
    if (ssh_pki_import_privkey_file(paths.private_key.c_str(), nullptr, nullptr, nullptr, key) !=
        SSH_OK) {
      return Error(ErrorCategory::guest,
                   "per-VM SSH key '" + paths.private_key + "'",
                   "cannot be read as an OpenSSH private key",
                   "move it away; lume-unlock makes a new one at the next password login");
    }
    return true;
  }
  if (!create) {
    return false;
  }
  char* private_text = nullptr;
  if (ssh_pki_generate(SSH_KEYTYPE_ED25519, 0, key) != SSH_OK ||
      ssh_pki_export_privkey_base64(*key, nullptr, nullptr, nullptr, &private_text) != SSH_OK) {
    return Error(ErrorCategory::guest,
                 "per-VM SSH key for VM '" + vm + "'",
                 "libssh could not generate and export an ed25519 key");
  }
  std::string private_pem = private_text;
  ssh_string_free_char(private_text);
  LUME_UNLOCK_TRY_ASSIGN(auto public_line, public_key_line(*key));
  LUME_UNLOCK_TRY(util::make_directories(paths.directory, 0700));
  LUME_UNLOCK_TRY(util::write_file_atomic(paths.private_key, private_pem, 0600));
  LUME_UNLOCK_TRY(
      util::write_file_atomic(paths.public_key, public_line + " lume-unlock@" + vm + "\n", 0644));
  return true;
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
  const std::string directory = state_dir + "/vms/" + vm;
  return VmKeyPaths{directory,
                    directory + "/known_host",
                    directory + "/ssh_ed25519",
                    directory + "/ssh_ed25519.pub"};
}

SshSessionOptions session_options(const ConnectionOptions& options,
                                  const std::string& vm,
                                  const std::string& host,
                                  const std::string& state_dir) {
  SshSessionOptions session;
  session.vm = vm;
  session.host = host;
  session.port = options.port;
  session.user = options.user;
  session.state_dir = state_dir;
  session.password_env = options.password_env;
  session.accept_new_host_key = options.accept_new_host_key;
  const char* secret =
      options.password_env.empty() ? nullptr : std::getenv(options.password_env.c_str());
  session.password_from_environment = secret != nullptr && *secret != '\0';
  session.password = session.password_from_environment ? secret : k_default_guest_password;
  return session;
}

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
  int yes = 1;
  ssh_options_set(s.session, SSH_OPTIONS_HOST, options.host.c_str());
  ssh_options_set(s.session, SSH_OPTIONS_PORT, &port);
  ssh_options_set(s.session, SSH_OPTIONS_USER, options.user.c_str());
  ssh_options_set(s.session, SSH_OPTIONS_TIMEOUT, &seconds);
  ssh_options_set(s.session, SSH_OPTIONS_TIMEOUT_USEC, &micros);
  // Without TCP_NODELAY every small request (an SFTP write, a channel open) waits for the
  // peer's delayed ACK: ~40 ms each, 1 MB/s uploads.
  ssh_options_set(s.session, SSH_OPTIONS_NODELAY, &yes);
  // AES-GCM first: libcrypto runs it on the CPU's AES instructions (AES-NI; Apple Silicon's
  // crypto extensions). With libssh's default order a 256 MiB install took 2.36 s, with this one
  // 1.93 s (artifact_transfer_bench, median of 5). OpenSSH's sshd offers all six by default, and
  // chacha20-poly1305 and the ctr ciphers even when built without OpenSSL (docs/sources.md).
  const char* ciphers =
      "aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,"
      "aes128-ctr,aes192-ctr,aes256-ctr";
  ssh_options_set(s.session, SSH_OPTIONS_CIPHERS_C_S, ciphers);
  ssh_options_set(s.session, SSH_OPTIONS_CIPHERS_S_C, ciphers);
  // Our own pin file decides trust; the user's ~/.ssh/config and known_hosts play no part.
  ssh_options_set(s.session, SSH_OPTIONS_PROCESS_CONFIG, &no);
  ssh_options_set(s.session, SSH_OPTIONS_KNOWNHOSTS, "/dev/null");
  ssh_options_set(s.session, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");

  if (ssh_connect(s.session) != SSH_OK) {
    std::string why = s.ssh_error();
    std::string hint = "check that the VM is running and reachable from this host, then retry";
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
    }
    return self->failure("connecting to", why, hint);
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
  m_host_key_fingerprint = key_fingerprint(server_key.key);
  LUME_UNLOCK_TRY_ASSIGN(auto offered, public_key_line(server_key.key));
  std::error_code ec;
  if (std::filesystem::exists(s.paths.known_host, ec)) {
    LUME_UNLOCK_TRY_ASSIGN(auto pinned, util::read_file(s.paths.known_host));
    const std::string pinned_line = util::trim(pinned);
    if (pinned_line == offered) {
      return ok_status();
    }
    if (!s.options.accept_new_host_key) {
      return failure("connecting to",
                     "the guest's host key changed: pinned " + pinned_fingerprint(pinned_line) +
                         " (in '" + s.paths.known_host + "'), offered " + m_host_key_fingerprint,
                     "if VM '" + s.options.vm +
                         "' was recreated or reinstalled on purpose, rerun with "
                         "--ssh-accept-new-host-key to pin the new key; otherwise another "
                         "machine may be answering at " +
                         s.options.host);
    }
  }
  LUME_UNLOCK_TRY(util::make_directories(s.paths.directory, 0700));
  return util::write_file_atomic(s.paths.known_host, offered + "\n", 0644);
}

Status SshSession::authenticate() {
  Impl& s = *m_impl;
  const std::string authenticating = "logging in as '" + s.options.user + "' to";
  const auto lost = [&] {
    return failure(authenticating, s.ssh_error(), "retry; the connection was lost during login");
  };
  int rc = ssh_userauth_none(s.session, nullptr);
  if (rc == SSH_AUTH_ERROR) {
    return lost();
  }
  if (rc == SSH_AUTH_SUCCESS) {
    m_auth_method = AuthMethod::none;
    return ok_status();
  }
  const int methods = ssh_userauth_list(s.session, nullptr);
  KeyHandle key;
  LUME_UNLOCK_TRY_ASSIGN(auto existing, load_key(s.paths, s.options.vm, false, &key.key));
  if (existing && (methods & SSH_AUTH_METHOD_PUBLICKEY) != 0) {
    rc = ssh_userauth_publickey(s.session, nullptr, key.key);
    if (rc == SSH_AUTH_SUCCESS) {
      m_auth_method = AuthMethod::public_key;
      return ok_status();
    }
    if (rc == SSH_AUTH_ERROR) {
      return lost();
    }
  }
  const std::string key_state =
      !existing ? "there is no per-VM key yet"
      : (methods & SSH_AUTH_METHOD_PUBLICKEY) != 0
          ? "the guest rejected the per-VM key '" + s.paths.private_key + "'"
          : "the guest does not offer public-key login";
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
    return lost();
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
  return install_per_vm_key();
}

Status SshSession::install_per_vm_key() {
  // First contact: make (or reuse) the per-VM key and install it for the next connections.
  KeyHandle key;
  LUME_UNLOCK_TRY(load_key(m_impl->paths, m_impl->options.vm, true, &key.key));
  LUME_UNLOCK_TRY_ASSIGN(auto key_part, public_key_line(key.key));
  LUME_UNLOCK_TRY_ASSIGN(auto quoted_line,
                         shell_quote(key_part + " lume-unlock@" + m_impl->options.vm));
  LUME_UNLOCK_TRY_ASSIGN(auto quoted_key, shell_quote(key_part));
  // Idempotent: the key is appended only when absent; a last line without newline is closed.
  LUME_UNLOCK_TRY_ASSIGN(
      auto result,
      run("umask 077 && mkdir -p \"$HOME/.ssh\" && chmod 700 \"$HOME/.ssh\" && "
          "f=\"$HOME/.ssh/authorized_keys\" && touch \"$f\" && chmod 600 \"$f\" && "
          "if ! grep -qF " +
          quoted_key +
          " \"$f\"; then "
          "if [ -s \"$f\" ] && [ -n \"$(tail -c 1 \"$f\")\" ]; then echo >> \"$f\"; fi; "
          "printf '%s\\n' " +
          quoted_line + " >> \"$f\"; fi"));
  if (result.exit_status != 0) {
    return failure("installing the per-VM key in ~/.ssh/authorized_keys on",
                   "exit status " + std::to_string(result.exit_status) + ": " +
                       util::trim(result.stderr_text),
                   "check that the guest user's home is writable, then retry");
  }
  m_installed_key = true;
  return ok_status();
}

} // namespace lume_unlock::guest

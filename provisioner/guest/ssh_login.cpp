#include "guest/ssh_login.hpp"

#include "guest/shell_quote.hpp"
#include "guest/ssh_host_key.hpp"
#include "guest/ssh_session_impl.hpp"
#include "util/atomic_file.hpp"
#include "util/ecdsa_key.hpp"

#include <filesystem>

namespace lume_unlock::guest {

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
                       trim_end(result.stderr_text),
                   "check that the guest user's home is writable, then retry");
  }
  m_installed_key = true;
  return ok_status();
}

} // namespace lume_unlock::guest

#include "guest/ssh_host_key.hpp"

#include "guest/ssh_session_impl.hpp"
#include "util/atomic_file.hpp"

#include <filesystem>

namespace lume_unlock::guest {

namespace {

const char* const k_override_flag = "--ssh-accept-new-host-key";

} // namespace

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

Result<std::string> public_key_line(ssh_key key) {
  char* b64 = nullptr;
  if (ssh_pki_export_pubkey_base64(key, &b64) != SSH_OK) {
    return Error(ErrorCategory::guest, "cannot export an SSH public key", "libssh refused");
  }
  std::string line = std::string(ssh_key_type_to_char(ssh_key_type(key))) + " " + b64;
  ssh_string_free_char(b64);
  return line;
}

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
  return key_fingerprint(key.key);
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
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(s.paths.known_host, ec)) {
    LUME_UNLOCK_TRY_ASSIGN(auto pinned, util::read_file(s.paths.known_host));
    const std::string pinned_line = trim_end(pinned);
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

} // namespace lume_unlock::guest

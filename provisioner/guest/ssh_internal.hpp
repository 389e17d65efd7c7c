#pragma once

// What the SshSession files share (ssh_session.cpp: connecting, the pinned host key, logging in;
// ssh_transfer.cpp: commands, SFTP and streamed files): the libssh handles of one connection and
// how its errors name the guest. Nothing outside provisioner/guest/ includes it but unit tests.

#include "guest/ssh_session.hpp"

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <string>

namespace lume_unlock::guest {

/// `text` without trailing newlines, carriage returns and spaces (libssh's and the shell's
/// messages end with them).
inline std::string trim_end(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

struct SshSession::Impl {
  SshSessionOptions options;
  VmKeyPaths paths;
  ssh_session session = nullptr;
  sftp_session sftp = nullptr;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (sftp != nullptr) {
      sftp_free(sftp);
    }
    if (session != nullptr) {
      ssh_disconnect(session);
      ssh_free(session);
    }
  }

  /// "VM 'demo' (lume@127.0.0.1:22)": who we were talking to, for every error.
  std::string target() const {
    return "VM '" + options.vm + "' (" + options.user + "@" + options.host + ":" +
           std::to_string(options.port) + ")";
  }

  std::string ssh_error() const { return trim_end(ssh_get_error(session)); }
};

/// The line the receiving command writes to standard error when `tee` could not store every
/// byte (it reports the error and keeps passing the bytes on, so shasum alone would not tell).
constexpr const char* k_tee_failed_marker = "lume-unlock-stream-store-failed";

/// The guest command that receives a streamed file at the (quoted) path, created 0600: `cat`
/// stores it, or with `hash`, `tee` stores it while `shasum -a 256` hashes the same bytes and
/// prints "<hex>  -" (a failed store adds k_tee_failed_marker to standard error).
std::string stream_receive_command(const std::string& quoted_path, bool hash);

/// The SHA-256 in shasum's output ("<64 lower-case hex>  -\n"), or "" when the output is not
/// exactly one such line.
std::string guest_digest_from(const std::string& shasum_output);

} // namespace lume_unlock::guest

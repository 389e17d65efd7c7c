#include "guest/sftp_transfer.hpp"

#include "guest/shell_quote.hpp"
#include "guest/ssh_session_impl.hpp"
#include "util/sha256.hpp"
#include "util/size.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace lume_unlock::guest {

namespace {

std::string random_suffix() {
  std::random_device device;
  char text[17];
  std::snprintf(text, sizeof text, "%08x%08x", device(), device());
  return text;
}

/// Why writing a temporary failed and what to do; an empty `why` means it did not.
struct WriteFailure {
  std::string why;
  std::string hint;
};

/// Writes all of `bytes` to `file` in k_sftp_chunk requests and closes it.
WriteFailure write_and_close(sftp_file file, std::string_view bytes, ssh_session session) {
  std::size_t offset = 0;
  while (offset < bytes.size()) {
    const std::size_t count = std::min(k_sftp_chunk, bytes.size() - offset);
    const ssize_t written = sftp_write(file, bytes.data() + offset, count);
    if (written <= 0) {
      const std::string why = "writing failed after " + std::to_string(offset) + " of " +
                              std::to_string(bytes.size()) +
                              " bytes: " + trim_end(ssh_get_error(session));
      sftp_close(file);
      return {why, "the previous file is untouched; check that the VM is still running and retry"};
    }
    offset += static_cast<std::size_t>(written);
  }
  if (sftp_close(file) != SSH_NO_ERROR) {
    return {"closing the temporary file failed: " + trim_end(ssh_get_error(session)),
            "the previous file is untouched; check the guest's free disk space"};
  }
  return {};
}

} // namespace

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

std::string verify_and_rename_command(const std::string& quoted_temporary,
                                      const std::string& quoted_target,
                                      const std::string& sha256,
                                      mode_t mode) {
  char mode_text[8];
  std::snprintf(mode_text, sizeof mode_text, "%04o", static_cast<unsigned>(mode & 07777));
  return "t=" + quoted_temporary + "; d=" + quoted_target +
         "; s=$(shasum -a 256 \"$t\" 2>&1) || { rm -f \"$t\"; printf 'shasum failed: %s\\n' \"$s\" "
         ">&2; exit 1; }"
         "; s=${s%% *}"
         "; if [ \"$s\" != " +
         sha256 +
         " ]; then rm -f \"$t\"; "
         "printf 'SHA-256 in the guest is %s, expected " +
         sha256 +
         "\\n' \"$s\" >&2; exit 1; fi"
         "; if [ -d \"$d\" ]; then rm -f \"$t\"; echo 'the target is a directory' >&2; exit 1; fi"
         "; chmod " +
         mode_text + " \"$t\" && mv -f \"$t\" \"$d\" || { rm -f \"$t\"; exit 1; }";
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
                     "cannot create its directory: " + trim_end(made.stderr_text),
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
  if (const WriteFailure failed = write_and_close(file, bytes, s.session); !failed.why.empty()) {
    sftp_unlink(s.sftp, temporary.c_str()); // best effort; the connection may be gone
    return failure(what, failed.why, failed.hint);
  }

  // ONE command: verify the digest in the guest, then chmod and rename.
  const std::string command = verify_and_rename_command(
      quoted_tmp.value(), quoted_dst.value(), util::sha256_hex(bytes), mode);
  auto checked = run(command);
  if (!checked.ok()) {
    return checked.error().with_hint(
        "the previous file is untouched; check that the VM is still running and retry");
  }
  if (checked.value().exit_status != 0) {
    std::string why = trim_end(checked.value().stderr_text);
    return failure(what,
                   why.empty() ? "verify-and-rename exited with status " +
                                     std::to_string(checked.value().exit_status)
                               : why,
                   "the previous file is untouched; check the path and free space in the guest");
  }
  return ok_status();
}

Result<SentFile> SshSession::sftp_send_file(int input,
                                            const std::string& local_path,
                                            const std::string& remote_path,
                                            const std::function<void(std::uint64_t)>& sent) {
  Impl& s = *m_impl;
  const std::string what = "upload of '" + local_path + "' as '" + remote_path + "' to";
  LUME_UNLOCK_TRY(ensure_sftp());
  ++m_sftp_transfer_count;
  sftp_file file = sftp_open(s.sftp, remote_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (file == nullptr) {
    return failure(what,
                   "cannot create it: " + sftp_error_text(sftp_get_error(s.sftp)),
                   "check that the directory exists and the guest user may write to it");
  }
  std::vector<char> buffer(k_sftp_write_chunk);
  SentFile done;
  for (;;) {
    const ssize_t got = ::read(input, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      const std::string why = std::strerror(errno);
      sftp_close(file);
      return Error(ErrorCategory::failure,
                   "reading '" + local_path + "' after " + std::to_string(done.bytes) + " bytes",
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
        const std::string why = "writing failed after " + std::to_string(done.bytes + offset) +
                                " bytes: " + s.ssh_error();
        sftp_close(file);
        return failure(what, why, "check that the VM is still running and has free disk space");
      }
      offset += static_cast<std::size_t>(written);
    }
    done.bytes += static_cast<std::uint64_t>(got);
    if (sent) {
      sent(done.bytes);
    }
  }
  if (sftp_close(file) != SSH_NO_ERROR) {
    return failure(
        what, "closing the file failed: " + s.ssh_error(), "check the guest's free disk space");
  }
  return done;
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

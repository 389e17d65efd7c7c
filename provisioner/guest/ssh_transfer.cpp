// SshSession's commands (exec channels) and file transfers (SFTP, or streamed into a command).
#include "guest/shell_quote.hpp"
#include "guest/ssh_internal.hpp"
#include "util/sha256.hpp"
#include "util/size.hpp"
#include "util/text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace lume_unlock::guest {

namespace {

constexpr std::size_t k_stream_chunk = 256 * 1024; // libssh cuts it into the guest's packets
/// Reads go in 32 KiB requests, well under sftp-server's 256 KiB packet limit.
constexpr std::size_t k_sftp_chunk = 32 * 1024;
/// SFTP writes: libssh 0.10 waits for each write's status, so fewer, larger writes (still under
/// the limit, with room for the packet header) carry a file at several times the rate.
constexpr std::size_t k_sftp_write_chunk = 192 * 1024;
// ssh_channel_write waits for the guest's window for at most the session timeout and then
// returns having written nothing; this many such waits in a row, and the guest stopped reading.
constexpr int k_max_idle_waits = 6;

/// Closes a host file descriptor when it goes out of scope.
struct FileCloser {
  int fd;
  ~FileCloser() { ::close(fd); }
};

/// Owns one libssh channel: closed and freed with it, whatever state its command reached
/// (closing ends a command that is still writing).
struct ChannelGuard {
  ssh_channel channel;
  ChannelGuard(const ChannelGuard&) = delete;
  ChannelGuard& operator=(const ChannelGuard&) = delete;
  ~ChannelGuard() {
    ssh_channel_close(channel);
    ssh_channel_free(channel);
  }
};

using SftpFile = std::unique_ptr<sftp_file_struct, int (*)(sftp_file)>;

std::string sftp_error_text(int code) {
  static const std::map<int, const char*> words = {
      {SSH_FX_EOF, "end of file"},
      {SSH_FX_NO_SUCH_FILE, "no such file or directory"},
      {SSH_FX_PERMISSION_DENIED, "permission denied"},
      {SSH_FX_FAILURE, "the guest's SFTP server reported a failure"},
      {SSH_FX_NO_CONNECTION, "no connection"},
      {SSH_FX_CONNECTION_LOST, "connection lost"},
      {SSH_FX_FILE_ALREADY_EXISTS, "file already exists"}};
  const auto found = words.find(code);
  return found != words.end() ? found->second : "SFTP error " + std::to_string(code);
}

/// Writes `length` bytes into `file`, adding what went to `written`; why it stopped, or "".
std::string sftp_write_all(ssh_session session,
                           sftp_file file,
                           const char* data,
                           std::size_t length,
                           std::uint64_t& written) {
  for (std::size_t offset = 0; offset < length;) {
    const ssize_t count =
        sftp_write(file, data + offset, std::min(k_sftp_write_chunk, length - offset));
    if (count <= 0) {
      return "writing failed after " + std::to_string(written) +
             " bytes: " + util::trim(ssh_get_error(session));
    }
    offset += static_cast<std::size_t>(count);
    written += static_cast<std::uint64_t>(count);
  }
  return "";
}

/// Writes `length` bytes into `channel`, waiting for the guest's window as needed, adding what
/// went to `written`; why the guest stopped taking them, or "".
std::string write_to_channel(ssh_channel channel,
                             const char* data,
                             std::size_t length,
                             std::uint64_t& written,
                             long wait_seconds) {
  std::size_t offset = 0;
  for (int idle = 0; offset < length;) {
    const int count =
        ssh_channel_write(channel, data + offset, static_cast<std::uint32_t>(length - offset));
    if (count > 0) {
      offset += static_cast<std::size_t>(count);
      written += static_cast<std::uint64_t>(count);
      idle = 0;
    } else if (count < 0 || ssh_channel_is_closed(channel) != 0 ||
               ssh_channel_is_eof(channel) != 0) {
      return util::trim(ssh_get_error(ssh_channel_get_session(channel)));
    } else if (++idle == k_max_idle_waits) {
      return "the guest took no bytes for " + std::to_string(k_max_idle_waits * wait_seconds) +
             " s";
    }
  }
  return "";
}

/// Reads the host file `input` in `chunk`-byte pieces and hands each to `write` (which adds what
/// went to `written` and says why it stopped, or ""), reporting progress to `sent`. Returns why
/// writing stopped, or "" at the end of the file; an error when the host file cannot be read.
Result<std::string>
pump(int input,
     std::size_t chunk,
     const std::string& local_path,
     std::uint64_t& written,
     const std::function<std::string(const char*, std::size_t, std::uint64_t&)>& write,
     const std::function<void(std::uint64_t)>& sent) {
  std::vector<char> buffer(chunk);
  for (;;) {
    const ssize_t got = ::read(input, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      return Error(ErrorCategory::failure,
                   "reading '" + local_path + "' after " + std::to_string(written) + " bytes",
                   std::strerror(errno));
    }
    if (got == 0) {
      return std::string();
    }
    std::string stopped = write(buffer.data(), static_cast<std::size_t>(got), written);
    if (sent) {
      sent(written);
    }
    if (!stopped.empty()) {
      return stopped;
    }
  }
}

} // namespace

Result<CommandResult> SshSession::run(const std::string& command) {
  ++m_command_count;
  const std::string what = "running a command on";
  ssh_channel channel = ssh_channel_new(m_impl->session);
  if (channel == nullptr) {
    return failure(what, m_impl->ssh_error(), "retry; the SSH connection may have dropped");
  }
  ChannelGuard guard{channel};
  LUME_UNLOCK_TRY(start_command(channel, command, what));
  ssh_channel_send_eof(channel); // no stdin: commands that read it see end of file
  return collect_output(channel, what);
}

Status SshSession::start_command(ssh_channel channel,
                                 const std::string& command,
                                 const std::string& what) {
  if (ssh_channel_open_session(channel) != SSH_OK ||
      ssh_channel_request_exec(channel, command.c_str()) != SSH_OK) {
    return failure(what,
                   "cannot start it: " + m_impl->ssh_error(),
                   "retry; the SSH connection may have dropped");
  }
  return ok_status();
}

Result<CommandResult> SshSession::collect_output(ssh_channel channel, const std::string& what) {
  const SshSessionOptions& options = m_impl->options;
  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() + options.command_timeout;
  const std::size_t limit = options.max_output_bytes;
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
                     "the connection broke while it ran: " + m_impl->ssh_error(),
                     "retry; check that the VM is still running");
    }
    if (result.stdout_text.size() > limit || result.stderr_text.size() > limit) {
      // Closing the channel (the caller's guard) ends the command's output; nothing more is read.
      return failure(what,
                     std::string("its ") +
                         (result.stdout_text.size() > limit ? "standard output" : "error output") +
                         " passed the limit of " + util::describe_limit(limit),
                     "run it with 'lume-unlock ssh " + options.vm +
                         " -- COMMAND' and send its output to a file in the guest");
    }
    if (out <= 0 && err <= 0 && ssh_channel_is_eof(channel)) {
      break;
    }
    if (options.command_timeout.count() > 0 && std::chrono::steady_clock::now() > deadline) {
      return failure(what,
                     "no end after " + std::to_string(options.command_timeout.count()) + " ms",
                     "the command may be waiting for input or hung; check it in the guest");
    }
  }
  result.exit_status = ssh_channel_get_exit_status(channel);
  return result;
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
  const std::string temporary =
      directory + "." + name + ".lume-unlock-" + util::random_hex(16) + ".tmp";
  LUME_UNLOCK_TRY_ASSIGN(auto quoted_tmp, shell_quote(temporary));
  LUME_UNLOCK_TRY_ASSIGN(auto quoted_dst, shell_quote(remote_path));
  LUME_UNLOCK_TRY(ensure_sftp());
  ++m_sftp_transfer_count;
  const auto open = [&] {
    return SftpFile(sftp_open(s.sftp, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600),
                    sftp_close);
  };
  SftpFile file = open();
  if (!file && sftp_get_error(s.sftp) == SSH_FX_NO_SUCH_FILE && !directory.empty()) {
    // The parent directory is missing: one extra command, only on the first upload into it.
    LUME_UNLOCK_TRY_ASSIGN(auto made, run("mkdir -p " + shell_quote(directory).value()));
    if (made.exit_status != 0) {
      return failure(what,
                     "cannot create its directory: " + util::trim(made.stderr_text),
                     "check the path and the guest user's permissions");
    }
    file = open();
  }
  if (!file) {
    return failure(what,
                   "cannot create the temporary file '" + temporary +
                       "': " + sftp_error_text(sftp_get_error(s.sftp)),
                   "check that the directory exists and the guest user may write to it");
  }
  std::uint64_t written = 0;
  std::string why = sftp_write_all(s.session, file.get(), bytes.data(), bytes.size(), written);
  std::string hint = "the previous file is untouched; check that the VM is still running and retry";
  if (why.empty() && sftp_close(file.release()) != SSH_NO_ERROR) {
    why = "closing the temporary file failed: " + s.ssh_error();
    hint = "the previous file is untouched; check the guest's free disk space";
  }
  if (!why.empty()) {
    file.reset();
    sftp_unlink(s.sftp, temporary.c_str()); // best effort; the connection may be gone
    return failure(what, why, hint);
  }
  auto checked =
      run(verify_and_rename_command(quoted_tmp, quoted_dst, util::sha256_hex(bytes), mode));
  if (!checked.ok()) {
    return checked.error().with_hint(
        "the previous file is untouched; check that the VM is still running and retry");
  }
  if (checked.value().exit_status != 0) {
    why = util::trim(checked.value().stderr_text);
    return failure(what,
                   why.empty() ? "verify-and-rename exited with status " +
                                     std::to_string(checked.value().exit_status)
                               : why,
                   "the previous file is untouched; check the path and free space in the guest");
  }
  return ok_status();
}

Result<std::uint64_t> SshSession::send_file(const std::string& local_path,
                                            const std::string& remote_path,
                                            const std::function<void(std::uint64_t)>& sent) {
  Impl& s = *m_impl;
  const int input = ::open(local_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (input < 0) {
    return Error(ErrorCategory::failure,
                 "reading '" + local_path + "'",
                 std::strerror(errno),
                 "check that the file exists and is readable");
  }
  FileCloser closer{input};
  struct stat info {};
  if (::fstat(input, &info) != 0) {
    return Error(ErrorCategory::failure, "reading '" + local_path + "'", std::strerror(errno));
  }
  const auto size = static_cast<std::uint64_t>(info.st_size);
  const std::string what = "upload of '" + local_path + "' as '" + remote_path + "' to";
  if (size >= s.options.stream_min_bytes) {
    return stream_file(input, size, local_path, remote_path, what, sent);
  }
  std::uint64_t done = 0;
  LUME_UNLOCK_TRY(ensure_sftp());
  ++m_sftp_transfer_count;
  SftpFile file(sftp_open(s.sftp, remote_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600),
                sftp_close);
  if (!file) {
    return failure(what,
                   "cannot create it: " + sftp_error_text(sftp_get_error(s.sftp)),
                   "check that the directory exists and the guest user may write to it");
  }
  const auto write = [&](const char* data, std::size_t length, std::uint64_t& written) {
    return sftp_write_all(s.session, file.get(), data, length, written);
  };
  LUME_UNLOCK_TRY_ASSIGN(auto stopped,
                         pump(input, k_sftp_write_chunk, local_path, done, write, sent));
  if (!stopped.empty()) {
    return failure(what, stopped, "check that the VM is still running and has free disk space");
  }
  if (sftp_close(file.release()) != SSH_NO_ERROR) {
    return failure(
        what, "closing the file failed: " + s.ssh_error(), "check the guest's free disk space");
  }
  return done;
}

Result<std::uint64_t> SshSession::stream_file(int input,
                                              std::uint64_t size,
                                              const std::string& local_path,
                                              const std::string& remote_path,
                                              const std::string& what,
                                              const std::function<void(std::uint64_t)>& sent) {
  Impl& s = *m_impl;
  std::uint64_t done = 0;
  // Streamed: the bytes go out as fast as the guest's channel window allows, no write waiting for
  // an answer (libssh 0.10's sftp_write has no asynchronous form).
  LUME_UNLOCK_TRY_ASSIGN(auto quoted, shell_quote(remote_path));
  ssh_channel channel = ssh_channel_new(s.session);
  if (channel == nullptr) {
    return failure(what, s.ssh_error(), "retry; the SSH connection may have dropped");
  }
  ChannelGuard guard{channel};
  ++m_stream_transfer_count;
  LUME_UNLOCK_TRY(start_command(channel, "umask 077 && cat > " + quoted, what));
  const long wait_seconds = s.options.connect_timeout.count() / 1000;
  const auto write = [&](const char* data, std::size_t length, std::uint64_t& written) {
    return write_to_channel(channel, data, length, written, wait_seconds);
  };
  LUME_UNLOCK_TRY_ASSIGN(auto stopped, pump(input, k_stream_chunk, local_path, done, write, sent));
  if (stopped.empty()) {
    ssh_channel_send_eof(channel); // the end of the file: the receiving command finishes
  }
  // The guest's side of the story: why storing failed, if it did.
  auto output = collect_output(channel, what);
  if (stopped.empty() && output.ok() && output.value().exit_status == -1 &&
      output.value().stderr_text.empty()) {
    // No exit status and nothing said: the connection closed, not a failed store.
    stopped = "the connection closed before the guest reported the end";
  }
  if (!stopped.empty()) {
    const std::string said = output.ok() ? util::trim(output.value().stderr_text) : "";
    return failure(what,
                   "the transfer stopped after " + std::to_string(done) + " of " +
                       std::to_string(size) + " bytes: " + (said.empty() ? stopped : said),
                   "check that the VM is still running and has free disk space, then retry");
  }
  LUME_UNLOCK_TRY_ASSIGN(const CommandResult result, std::move(output));
  const std::string said = util::trim(result.stderr_text);
  if (result.exit_status != 0) {
    return failure(what,
                   "storing it in the guest failed" + (said.empty() ? "" : ": " + said),
                   "check that the directory exists, the guest user may write to it and the "
                   "guest has free disk space");
  }
  return done; // the caller checks the stored file
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
  SftpFile file(sftp_open(s.sftp, remote_path.c_str(), O_RDONLY, 0), sftp_close);
  if (!file) {
    return failure(what,
                   sftp_error_text(sftp_get_error(s.sftp)),
                   "check the path with 'lume-unlock ssh " + s.options.vm + " -- ls -l PATH'");
  }
  if (offset != 0 && sftp_seek64(file.get(), offset) != 0) {
    return failure(what,
                   "cannot seek to offset " + std::to_string(offset) + ": " + s.ssh_error(),
                   "check that the VM is still running and retry");
  }
  std::string content;
  char buffer[k_sftp_chunk];
  while (content.size() < length) {
    const ssize_t got =
        sftp_read(file.get(), buffer, std::min(sizeof buffer, length - content.size()));
    if (got == 0) {
      break;
    }
    if (got < 0) {
      return failure(what,
                     "reading failed after " + std::to_string(content.size()) +
                         " bytes: " + s.ssh_error(),
                     "check that the VM is still running and retry");
    }
    content.append(buffer, static_cast<std::size_t>(got));
  }
  return content;
}

} // namespace lume_unlock::guest

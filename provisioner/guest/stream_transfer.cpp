#include "guest/stream_transfer.hpp"

#include "guest/shell_quote.hpp"
#include "guest/ssh_exec.hpp"
#include "guest/ssh_session_impl.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace lume_unlock::guest {

namespace {

// ssh_channel_write waits for the guest's window for at most the session timeout (the connect
// timeout) and then returns having written nothing; this many such waits in a row, and the
// guest is taken to have stopped reading.
constexpr int k_max_idle_waits = 6;

/// Closes a host file descriptor when it goes out of scope.
struct FileCloser {
  int fd;
  ~FileCloser() { ::close(fd); }
};

/// read(2) into `buffer`, again when a signal interrupted it.
ssize_t read_some(int fd, std::vector<char>& buffer) {
  for (;;) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got >= 0 || errno != EINTR) {
      return got;
    }
  }
}

/// Writes `length` bytes into `channel`, waiting for the guest's window as needed, and adds
/// what went to `written`. Returns why the guest stopped taking them, or "" when all went.
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
      return trim_end(ssh_get_error(ssh_channel_get_session(channel)));
    } else if (++idle == k_max_idle_waits) {
      return "the guest took no bytes for " + std::to_string(k_max_idle_waits * wait_seconds) +
             " s";
    }
  }
  return "";
}

/// Why a command's end was never reported, or "": a channel that closed with no exit status and
/// nothing on stderr lost its connection (after the last byte went out, say); it did not fail
/// to store the file.
std::string end_never_reported(const Result<CommandResult>& output) {
  const bool unreported =
      output.ok() && output.value().exit_status == -1 && output.value().stderr_text.empty();
  return unreported ? "the connection closed before the guest reported the end" : "";
}

} // namespace

std::string stream_receive_command(const std::string& quoted_path, bool hash) {
  if (!hash) {
    return "umask 077 && cat > " + quoted_path;
  }
  return std::string("umask 077 && { tee -- ") + quoted_path + " || echo " + k_tee_failed_marker +
         " >&2; } | shasum -a 256";
}

std::string guest_digest_from(const std::string& shasum_output) {
  std::string line = trim_end(shasum_output);
  if (line.size() != 64 + 3 || line.compare(64, 3, "  -") != 0) {
    return "";
  }
  line.resize(64);
  if (line.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return "";
  }
  return line;
}

Result<SentFile> SshSession::send_file(const std::string& local_path,
                                       const std::string& remote_path,
                                       const std::function<void(std::uint64_t)>& sent) {
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
  if (size >= m_impl->options.stream_min_bytes) {
    return stream_send_file(input, size, local_path, remote_path, sent);
  }
  return sftp_send_file(input, local_path, remote_path, sent);
}

Result<SentFile> SshSession::stream_send_file(int input,
                                              std::uint64_t size,
                                              const std::string& local_path,
                                              const std::string& remote_path,
                                              const std::function<void(std::uint64_t)>& sent) {
  Impl& s = *m_impl;
  const std::string what = "upload of '" + local_path + "' as '" + remote_path + "' to";
  LUME_UNLOCK_TRY_ASSIGN(auto quoted, shell_quote(remote_path));
  ssh_channel channel = ssh_channel_new(s.session);
  if (channel == nullptr) {
    return failure(what, s.ssh_error(), "retry; the SSH connection may have dropped");
  }
  ChannelGuard guard(channel);
  ++m_stream_transfer_count;
  const bool hash = s.options.hash_while_streaming;
  LUME_UNLOCK_TRY(start_command(channel, stream_receive_command(quoted, hash), what));

  // The bytes go out as fast as the guest's channel window allows: no write waits for an
  // answer, unlike libssh 0.10's sftp_write (it has no asynchronous write).
  std::vector<char> buffer(k_stream_chunk);
  SentFile done;
  std::string stopped; // why the guest stopped taking bytes, when it did
  while (stopped.empty()) {
    const ssize_t got = read_some(input, buffer);
    if (got < 0) {
      return Error(ErrorCategory::failure,
                   "reading '" + local_path + "' after " + std::to_string(done.bytes) + " bytes",
                   std::strerror(errno));
    }
    if (got == 0) {
      break;
    }
    stopped = write_to_channel(channel,
                               buffer.data(),
                               static_cast<std::size_t>(got),
                               done.bytes,
                               s.options.connect_timeout.count() / 1000);
    if (sent) {
      sent(done.bytes);
    }
  }
  if (stopped.empty()) {
    ssh_channel_send_eof(channel); // the end of the file: the receiving command finishes
  }
  // The guest's side of the story: shasum's line, or why storing failed.
  auto output = collect_output(channel, what);
  if (stopped.empty()) {
    stopped = end_never_reported(output);
  }
  if (!stopped.empty()) {
    const std::string said = output.ok() ? trim_end(output.value().stderr_text) : "";
    return failure(what,
                   "the transfer stopped after " + std::to_string(done.bytes) + " of " +
                       std::to_string(size) + " bytes: " + (said.empty() ? stopped : said),
                   "check that the VM is still running and has free disk space, then retry");
  }
  if (!output.ok()) {
    return output.error();
  }
  const CommandResult& result = output.value();
  const std::string said = trim_end(result.stderr_text);
  if (result.exit_status != 0 || said.find(k_tee_failed_marker) != std::string::npos) {
    return failure(what,
                   "storing it in the guest failed" + (said.empty() ? "" : ": " + said),
                   "check that the directory exists, the guest user may write to it and the "
                   "guest has free disk space");
  }
  if (!hash) {
    return done; // the caller checks the stored file
  }
  done.guest_sha256 = guest_digest_from(result.stdout_text);
  if (done.guest_sha256.empty()) {
    return failure(what,
                   "the guest's 'shasum -a 256' printed no digest: '" +
                       trim_end(result.stdout_text) + "'",
                   "check that shasum works in the guest ('lume-unlock ssh " + s.options.vm +
                       " -- shasum -a 256 /etc/hosts')");
  }
  return done;
}

} // namespace lume_unlock::guest

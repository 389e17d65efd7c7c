#include "guest/ssh_exec.hpp"

#include "guest/ssh_session_impl.hpp"
#include "util/size.hpp"

#include <chrono>

namespace lume_unlock::guest {

Result<CommandResult> SshSession::run(const std::string& command) {
  Impl& s = *m_impl;
  ++m_command_count;
  const std::string what = "running a command on";
  ssh_channel channel = ssh_channel_new(s.session);
  if (channel == nullptr) {
    return failure(what, s.ssh_error(), "retry; the SSH connection may have dropped");
  }
  ChannelGuard guard(channel);
  LUME_UNLOCK_TRY(start_command(channel, command, what));
  ssh_channel_send_eof(channel); // no stdin: commands that read it see end of file
  return collect_output(channel, what);
}

Status SshSession::start_command(ssh_channel channel,
                                 const std::string& command,
                                 const std::string& what) {
  Impl& s = *m_impl;
  if (ssh_channel_open_session(channel) != SSH_OK ||
      ssh_channel_request_exec(channel, command.c_str()) != SSH_OK) {
    return failure(
        what, "cannot start it: " + s.ssh_error(), "retry; the SSH connection may have dropped");
  }
  return ok_status();
}

Result<CommandResult> SshSession::collect_output(ssh_channel channel, const std::string& what) {
  Impl& s = *m_impl;
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
      // Closing the channel (the caller's guard) ends the command's output; nothing more is read.
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

} // namespace lume_unlock::guest

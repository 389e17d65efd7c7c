#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace lume_unlock::guest {

/// Reads and small writes go in 32 KiB requests, well under sftp-server's 256 KiB packet limit.
constexpr std::size_t k_sftp_chunk = 32 * 1024;
/// Streamed writes: libssh 0.10 waits for each write's status, so fewer, larger writes (still
/// under the limit, with room for the packet header) carry a file at several times the rate.
constexpr std::size_t k_sftp_write_chunk = 192 * 1024;

/// Words for an SFTP status code (SSH_FX_*), for errors.
std::string sftp_error_text(int code);

/// The ONE command that finishes an upload: check the temporary's SHA-256 against `sha256`,
/// refuse a target that is a directory (`mv` would move *into* it), chmod to `mode`, rename onto
/// the target; any failure removes the temporary and leaves the previous file. Both paths are
/// already quoted with shell_quote().
std::string verify_and_rename_command(const std::string& quoted_temporary,
                                      const std::string& quoted_target,
                                      const std::string& sha256,
                                      mode_t mode);

} // namespace lume_unlock::guest

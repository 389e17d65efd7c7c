#pragma once

#include <cstddef>
#include <string>

namespace lume_unlock::guest {

/// Host-file reads, and so channel writes, of this size: large enough that the per-call cost
/// vanishes, small enough to keep the host's memory flat (libssh cuts them into packets of the
/// guest's maximum, 32 KiB for OpenSSH).
constexpr std::size_t k_stream_chunk = 256 * 1024;

/// The line the receiving command writes to standard error when `tee` could not store every
/// byte (it reports the error and keeps passing the bytes on, so shasum alone would not tell).
constexpr const char* k_tee_failed_marker = "lume-unlock-stream-store-failed";

/// The guest command that receives a streamed file: standard input is stored at the path
/// (already quoted with shell_quote()), created 0600 (umask 077). With `hash`, `tee` stores it
/// and the same bytes are hashed by `shasum -a 256` as they arrive, whose "<hex>  -" line is the
/// command's output, its exit status shasum's, and a failed store adds k_tee_failed_marker to
/// standard error; without, `cat` stores it. Only what a stock macOS has, and the same in sh and
/// zsh (a login shell may be either).
std::string stream_receive_command(const std::string& quoted_path, bool hash);

/// The SHA-256 in shasum's output ("<64 lower-case hex>  -\n"), or "" when the output is not
/// exactly one such line.
std::string guest_digest_from(const std::string& shasum_output);

} // namespace lume_unlock::guest

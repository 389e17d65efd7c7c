#pragma once

#include "util/result.hpp"

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace lume_unlock::guest {

/// What a remote command produced.
struct CommandResult {
  int exit_status = -1;
  std::string stdout_text;
  std::string stderr_text;
};

/// A connection to one guest through which every guest operation goes. The SSH implementation
/// (ssh_session.hpp) is the real one; tests may provide others. Every command string handed to
/// run() must be built with shell_quote() (shell_quote.hpp) for each word that is not a literal.
class GuestSession {
public:
  virtual ~GuestSession() = default;

  /// Runs `command` with the guest user's login shell (sh -c semantics). A non-zero exit status
  /// is a result, not an error; errors are transport failures (category guest), and output past
  /// the session's limit (a guest that never stops writing must not fill the host's memory).
  virtual Result<CommandResult> run(const std::string& command) = 0;

  /// Uploads `bytes` to `remote_path`: written to a temporary name next to it, its SHA-256 checked
  /// in the guest, then renamed into place with `mode`. On any failure the previous file (if any)
  /// is untouched and no temporary is left.
  virtual Status upload(std::string_view bytes, const std::string& remote_path, mode_t mode) = 0;

  /// Streams the host file `local_path` to `remote_path` (created, or truncated, with mode 0600;
  /// its directory must exist) without holding it in memory, calling `sent(bytes so far)` after
  /// each chunk; returns the bytes sent. No rename: the caller writes into a staging directory and
  /// installs from there (install_streamed_payload in payload.hpp), which checks the stored file.
  /// Errors: the local file cannot be read (failure), the remote one cannot be written or the
  /// connection broke (guest).
  virtual Result<std::uint64_t> send_file(const std::string& local_path,
                                          const std::string& remote_path,
                                          const std::function<void(std::uint64_t)>& sent) = 0;

  /// Reads a whole remote file of at most `max_bytes`; an error when it does not exist, cannot be
  /// read, or is larger (naming the limit, without reading past it): a guest is not trusted to
  /// keep its files small.
  virtual Result<std::string> read_file(const std::string& remote_path, std::size_t max_bytes) = 0;

  /// Reads up to `length` bytes of a remote file from `offset` (fewer only at its end, none past
  /// it), without reading the rest: for the headers of a program (apply/program_check). An error
  /// when the file does not exist or cannot be read.
  virtual Result<std::string>
  read_range(const std::string& remote_path, std::uint64_t offset, std::size_t length) = 0;

  /// Commands run so far (for --verbose statistics and performance tests).
  virtual std::uint64_t command_count() const = 0;
};

/// Finds where a VM's guest answers SSH (apply/guest_access asks Lume); tests may provide others.
class GuestAddressResolver {
public:
  virtual ~GuestAddressResolver() = default;
  /// The guest's host address, waiting for it to become ready within the implementation's
  /// deadline; errors name the VM and say what to do (category lume_api or guest).
  virtual Result<std::string> resolve(const std::string& vm) = 0;
};

} // namespace lume_unlock::guest

#pragma once

#include "apply/shim_installer.hpp"
#include "enablement/enablement_list.hpp"
#include "guest/session.hpp"
#include "macho/macho.hpp"
#include "util/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::apply {

/// What one program path is in the guest now.
struct ProgramPath {
  enum class State {
    resolved,     ///< it exists; real_path is its realpath
    missing,      ///< nothing at that path
    dangling,     ///< a symbolic link whose target does not exist
    unresolvable, ///< it exists but realpath failed (a loop, a directory it may not search)
  };
  State state = State::missing;
  std::string real_path;   ///< only when resolved
  bool executable = false; ///< resolved to a regular file the guest user may run
};

/// ONE command that resolves every path of `programs` (each quoted with shell_quote) with the
/// guest's realpath(1), which calls the realpath(3) the shim uses on the running executable
/// (/bin/realpath, on macOS since 13). It prints one line per program, "<index> real <path>"
/// ("<index> not-executable <path>" when that is not an executable file), "<index> missing",
/// "<index> dangling" or "<index> unresolvable", or only "no-realpath" when the guest has no
/// realpath.
Result<std::string> resolve_command(const std::vector<std::string>& programs);

/// Parses resolve_command()'s output for `count` programs. Category guest when the guest has no
/// realpath, or the output is malformed or does not answer for every program.
Result<std::vector<ProgramPath>> parse_resolution(std::string_view output, std::size_t count);

/// Runs resolve_command() (one round trip; none when `programs` is empty) and parses it.
Result<std::vector<ProgramPath>> resolve_program_paths(guest::GuestSession& session,
                                                       const std::vector<std::string>& programs);

/// `list` with every entry's resolved_program set to the real path of its program, found in ONE
/// command (resolve_program_paths of the distinct programs). Category usage naming the entry
/// when a program does not exist, is a dangling link or does not resolve, when its real path
/// breaks the rules of a program (enablement::find_violation), or when it is not an executable
/// file (unless the entry is unchanged from `applied`, the list applied before); guest when the
/// command fails.
Result<enablement::EnablementList>
resolve_entries(guest::GuestSession& session,
                const enablement::EnablementList& list,
                const enablement::EnablementList* applied = nullptr);

/// Reads the headers of the program at `path` in the guest over SFTP (GuestSession::read_range):
/// the first 4 KiB, each slice's load commands and its code signature's index, CodeDirectory and
/// entitlements, nothing else. Needs no tool in the guest (lipo and codesign -d need Xcode's
/// command line tools). Errors name the program.
Result<macho::ProgramImage> read_guest_program(guest::GuestSession& session,
                                               const std::string& path);

/// Reads the headers of the host file at `path` the same way (pread, each request bounded). An
/// error (category failure) when it cannot be opened; the reader's errors otherwise.
Result<macho::ProgramImage> read_host_program(const std::string& path);

/// The shim a program is judged against: the installed shim's platform and its slice (the
/// platform's architecture: the bundle has one slice per darwin file, see shim/README.md), signed
/// ad hoc.
macho::ShimTarget shim_target(const InstalledShim& shim);

/// One program of the enablement list and the verdict on it.
struct ProgramCheck {
  std::string entry;   ///< the entry's name
  std::string program; ///< its path as the user wrote it
  macho::Verdict verdict;
};

/// "program '/p': injectable (arm64 slice)" or "… cannot be unlocked: <why>".
std::string describe_check(const ProgramCheck& check);

/// The error for a refused program: category usage when it is not a Mach-O (bad input),
/// verification otherwise; what = the entry, why = the verdict, hint = what to do.
Error refusal(const ProgramCheck& check);

/// The Mach-O checks of DESIGN §6 for entries resolve_entries accepted: each program's headers
/// read over SFTP (read_guest_program, once per program) and judged against the installed shim
/// and the guest's macOS version (macho::judge_program). A refused program is an error
/// (refusal(): what stops it and what to do); otherwise the verdicts, in entry order. No
/// command.
Result<std::vector<ProgramCheck>>
precheck_entries(guest::GuestSession& session,
                 const std::vector<enablement::EnablementEntry>& entries,
                 const InstalledShim& shim,
                 const std::optional<std::string>& guest_macos = std::nullopt);

} // namespace lume_unlock::apply

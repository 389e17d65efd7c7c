#pragma once

#include "apply/shim_record.hpp"
#include "guest/session.hpp"
#include "macho/macho.hpp"
#include "util/result.hpp"

#include <string>

namespace lume_unlock::apply {

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

} // namespace lume_unlock::apply

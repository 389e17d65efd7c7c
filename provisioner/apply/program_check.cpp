#include "apply/program_check.hpp"

#include "enablement/enablement_list.hpp"
#include "util/text_check.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lume_unlock::apply {

Result<macho::ProgramImage> read_guest_program(guest::GuestSession& session,
                                               const std::string& path) {
  const macho::ReadAt source = [&](std::uint64_t offset, std::size_t length) {
    return session.read_range(path, offset, length);
  };
  auto image = macho::read_program_image(source);
  if (!image.ok()) {
    return image.error().with_context("program " + util::quote_for_message(path));
  }
  return image;
}

Result<macho::ProgramImage> read_host_program(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Error(ErrorCategory::failure,
                 "reading program " + util::quote_for_message(path),
                 std::strerror(errno));
  }
  const macho::ReadAt source = [fd](std::uint64_t offset,
                                    std::size_t length) -> Result<std::string> {
    std::string bytes(length, '\0');
    std::size_t got = 0;
    while (got < length) {
      const ssize_t n =
          ::pread(fd, bytes.data() + got, length - got, static_cast<off_t>(offset + got));
      if (n <= 0) {
        break;
      }
      got += static_cast<std::size_t>(n);
    }
    bytes.resize(got);
    return bytes;
  };
  auto image = macho::read_program_image(source);
  ::close(fd);
  if (!image.ok()) {
    return image.error().with_context("program " + util::quote_for_message(path));
  }
  return image;
}

macho::ShimTarget shim_target(const InstalledShim& shim) {
  return macho::ShimTarget{shim.platform, {shim.arch()}, true};
}

std::string describe_check(const ProgramCheck& check) {
  const std::string program = "program " + util::quote_for_message(check.program);
  const macho::Verdict& verdict = check.verdict;
  if (!verdict.refused()) {
    return program + ": injectable (" + verdict.why + ")";
  }
  return program + " cannot be unlocked (" + macho::verdict_name(verdict.kind) +
         "): " + verdict.why;
}

Error refusal(const ProgramCheck& check) {
  const ErrorCategory category = check.verdict.kind == macho::VerdictKind::not_macho
                                     ? ErrorCategory::usage
                                     : ErrorCategory::verification;
  return Error(
      category, enablement::entry_label(check.entry), describe_check(check), check.verdict.fix);
}

} // namespace lume_unlock::apply

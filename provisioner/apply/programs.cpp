#include "apply/programs.hpp"

#include "enablement/enablement_list.hpp"
#include "guest/shell_quote.hpp"
#include "macho/macho.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>

namespace lume_unlock::apply {

namespace {

const char* const k_what = "resolving the real paths of the enabled programs in the guest";

Error resolution_error(const std::string& why) {
  return Error(ErrorCategory::guest, k_what, why, "retry; if it persists, run with --verbose");
}

} // namespace

Result<std::string> resolve_command(const std::vector<std::string>& programs) {
  // `[ -e ]` follows links, so a link to nothing is told apart with `[ -L ]` first. GNU realpath
  // (guest-sim) accepts a missing last component where macOS's fails; the -e test makes both
  // answer "missing".
  std::string command = "command -v realpath >/dev/null 2>&1 || { echo no-realpath; exit 0; }\n"
                        "r() {\n"
                        "  if [ -L \"$2\" ] && [ ! -e \"$2\" ]; then echo \"$1 dangling\"\n"
                        "  elif [ ! -e \"$2\" ]; then echo \"$1 missing\"\n"
                        "  elif p=$(realpath \"$2\" 2>/dev/null); then\n"
                        "    x=real; [ -f \"$p\" ] && [ -x \"$p\" ] || x=not-executable\n"
                        "    printf '%s %s %s\\n' \"$1\" \"$x\" \"$p\"\n"
                        "  else echo \"$1 unresolvable\"; fi\n"
                        "}\n";
  for (std::size_t i = 0; i < programs.size(); ++i) {
    LUME_UNLOCK_TRY_ASSIGN(auto quoted, guest::shell_quote(programs[i]));
    command += "r " + std::to_string(i) + " " + quoted + "\n";
  }
  return command;
}

Result<std::vector<ProgramPath>> parse_resolution(std::string_view output, std::size_t count) {
  std::vector<ProgramPath> paths(count);
  std::vector<bool> seen(count, false);
  std::istringstream lines{std::string(output)};
  std::string line;
  while (std::getline(lines, line)) {
    if (line == "no-realpath") {
      return Error(ErrorCategory::guest,
                   k_what,
                   "the guest has no realpath command",
                   "lume-unlock needs a guest with /bin/realpath (macOS 13 or later)");
    }
    const std::size_t space = line.find(' ');
    const std::size_t index =
        std::min<std::uint64_t>(util::parse_decimal(line.substr(0, space)).value_or(count), count);
    const std::string rest = space == std::string::npos ? std::string() : line.substr(space + 1);
    ProgramPath path;
    if (util::starts_with(rest, "real /") || util::starts_with(rest, "not-executable /")) {
      path.state = ProgramPath::State::resolved;
      path.real_path = rest.substr(rest.find(' ') + 1);
      path.executable = rest[0] == 'r';
    } else if (rest == "missing") {
      path.state = ProgramPath::State::missing;
    } else if (rest == "dangling") {
      path.state = ProgramPath::State::dangling;
    } else if (rest == "unresolvable") {
      path.state = ProgramPath::State::unresolvable;
    } else {
      return resolution_error("unexpected output line " + util::quote_for_message(line));
    }
    if (index == count || seen[index]) {
      return resolution_error("unexpected output line " + util::quote_for_message(line));
    }
    seen[index] = true;
    paths[index] = std::move(path);
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (!seen[i]) {
      return resolution_error("the guest answered for " + std::to_string(i) + " of " +
                              std::to_string(count) + " programs");
    }
  }
  return paths;
}

Result<std::vector<ProgramPath>> resolve_program_paths(guest::GuestSession& session,
                                                       const std::vector<std::string>& programs) {
  if (programs.empty()) {
    return std::vector<ProgramPath>{};
  }
  LUME_UNLOCK_TRY_ASSIGN(auto command, resolve_command(programs));
  auto ran = session.run(command);
  if (!ran.ok()) {
    return ran.error().with_context(k_what);
  }
  if (ran.value().exit_status != 0) {
    return resolution_error("exit status " + std::to_string(ran.value().exit_status) + ": " +
                            ran.value().stderr_text);
  }
  return parse_resolution(ran.value().stdout_text, programs.size());
}

Result<enablement::EnablementList> resolve_entries(guest::GuestSession& session,
                                                   const enablement::EnablementList& list,
                                                   const enablement::EnablementList* applied) {
  std::vector<std::string> programs;
  std::map<std::string, std::size_t> index_of_program;
  for (const enablement::EnablementEntry& entry : list.entries) {
    if (index_of_program.emplace(entry.program, programs.size()).second) {
      programs.push_back(entry.program);
    }
  }
  LUME_UNLOCK_TRY_ASSIGN(auto paths, resolve_program_paths(session, programs));
  enablement::EnablementList resolved = list;
  for (enablement::EnablementEntry& entry : resolved.entries) {
    const ProgramPath& path = paths[index_of_program.at(entry.program)];
    const std::string label = enablement::entry_label(entry.name);
    const std::string program = util::quote_for_message(entry.program);
    const std::string look =
        "look at it with 'lume-unlock ssh NAME -- ls -l " + entry.program + "'";
    switch (path.state) {
    case ProgramPath::State::missing:
      return Error(ErrorCategory::usage,
                   label,
                   "program " + program + " does not exist in the guest",
                   "install the program first, or give its absolute path with --program");
    case ProgramPath::State::dangling:
      return Error(ErrorCategory::usage,
                   label,
                   "program " + program +
                       " is a symbolic link to a file that does not exist in the guest",
                   look + " (an upgrade or a removed environment may have left it dangling)");
    case ProgramPath::State::unresolvable:
      return Error(ErrorCategory::usage,
                   label,
                   "program " + program +
                       " cannot be resolved to a real path in the guest (realpath failed: a "
                       "link loop, or a directory that may not be searched)",
                   look);
    case ProgramPath::State::resolved:
      entry.resolved_program = path.real_path;
      break;
    }
    if (auto violation = enablement::find_violation(entry)) {
      return enablement::violation_error(label, *violation);
    }
    const enablement::EnablementEntry* before =
        applied != nullptr ? applied->find(entry.name) : nullptr;
    if (!path.executable && (before == nullptr || *before != entry)) {
      return Error(ErrorCategory::usage,
                   label,
                   "program " + program + " is not an executable file in the guest",
                   "check it with 'lume-unlock ssh NAME -- ls -l " + entry.program + "'");
    }
  }
  return resolved;
}

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

Result<std::vector<ProgramCheck>>
precheck_entries(guest::GuestSession& session,
                 const std::vector<enablement::EnablementEntry>& entries,
                 const InstalledShim& shim,
                 const std::optional<std::string>& guest_macos) {
  std::vector<ProgramCheck> checks;
  // A program listed by several entries is read once.
  const macho::ShimTarget target = shim_target(shim);
  std::map<std::string, macho::Verdict> verdicts;
  for (const enablement::EnablementEntry& checked : entries) {
    auto known = verdicts.find(checked.program);
    if (known == verdicts.end()) {
      auto image = read_guest_program(session, checked.program);
      if (!image.ok()) {
        return image.error().with_context(enablement::entry_label(checked.name));
      }
      known =
          verdicts
              .emplace(checked.program, macho::judge_program(image.value(), target, guest_macos))
              .first;
    }
    ProgramCheck check{checked.name, checked.program, known->second};
    if (check.verdict.refused()) {
      return refusal(check);
    }
    checks.push_back(std::move(check));
  }
  return checks;
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

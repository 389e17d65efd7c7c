#include "apply/program_paths.hpp"

#include "guest/shell_quote.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <map>
#include <sstream>

namespace lume_unlock::apply {

namespace {

const char* const k_what = "resolving the real paths of the enabled programs in the guest";

Error resolution_error(const std::string& why) {
  return Error(ErrorCategory::guest, k_what, why, "retry; if it persists, run with --verbose");
}

/// "<digits>" as an index below `count`, or `count` when it is not one.
std::size_t index_of(const std::string& digits, std::size_t count) {
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return count;
  }
  const std::size_t index = std::stoul(digits);
  return index < count ? index : count;
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
                        "  elif p=$(realpath \"$2\" 2>/dev/null); then printf '%s real %s\\n' "
                        "\"$1\" \"$p\"\n"
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
        index_of(space == std::string::npos ? std::string() : line.substr(0, space), count);
    const std::string rest = space == std::string::npos ? std::string() : line.substr(space + 1);
    ProgramPath path;
    if (util::starts_with(rest, "real /")) {
      path.state = ProgramPath::State::resolved;
      path.real_path = rest.substr(5);
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
                                                   const enablement::EnablementList& list) {
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
  }
  return resolved;
}

} // namespace lume_unlock::apply

#include "apply/enablement_observe.hpp"

#include "enablement/enablement_json.hpp"
#include "guest/guest_records.hpp"
#include "guest/shell_quote.hpp"
#include "util/size.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <sstream>
#include <vector>

namespace lume_unlock::apply {

namespace {

/// The guest's message without its trailing newlines and spaces.
using util::trim;

constexpr const char* k_observe_what = "reading the enablement state of the guest";
constexpr const char* k_observe_hint =
    "retry; if it persists, check the guest with 'lume-unlock ssh NAME -- ls -la "
    "~/Library/LaunchAgents'";

Error observe_error(const std::string& why) {
  return Error(ErrorCategory::guest, k_observe_what, why, k_observe_hint);
}

std::vector<std::string> split_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  std::string word;
  while (in >> word) {
    words.push_back(word);
  }
  return words;
}

} // namespace

Result<std::string> observe_command(const std::string& home, std::uint32_t uid) {
  const std::string support = guest::support_dir_of_home(home);
  LUME_UNLOCK_TRY_ASSIGN(auto enablement_json, guest::shell_quote(support + "/enablement.json"));
  LUME_UNLOCK_TRY_ASSIGN(auto guard, guest::shell_quote(support + "/enabled-executables"));
  LUME_UNLOCK_TRY_ASSIGN(auto record, guest::shell_quote(installed_shim_record_path(home)));
  LUME_UNLOCK_TRY_ASSIGN(auto agents, guest::shell_quote(home + "/Library/LaunchAgents"));
  LUME_UNLOCK_TRY_ASSIGN(auto shims, guest::shell_quote(support + "/shim"));
  // `head -c` sends exactly the size announced even when the file grows meanwhile. $((s))
  // trims the spaces macOS's wc pads with (no `tr`: one process less per agent, and a hundred
  // agents are a hundred plists), and makes a file that vanished before wc read it size 0.
  return "emit() {\n"
         "  [ -f \"$2\" ] || return 0\n"
         "  s=$(wc -c <\"$2\"); s=$((s))\n"
         "  if [ \"$s\" -gt " +
         std::to_string(k_max_observed_file_bytes) +
         " ]; then printf 'oversize 0 %s %s\\n' \"$1\" \"$s\"; return 0; fi\n"
         "  printf '%s %s %s\\n' \"$1\" \"$s\" \"$3\"; head -c \"$s\" \"$2\"\n"
         "}\n" +
         "emit enablement " + enablement_json + " -\n" + "emit guard " + guard + " -\n" +
         "emit shim-record " + record + " -\n" + "for f in " + agents +
         "/dev.lume-unlock.*.plist; do\n"
         "  n=${f##*/}\n"
         "  case $n in *[!A-Za-z0-9._-]*) continue ;; esac\n"
         "  emit plist \"$f\" \"$n\"\n"
         "done\n"
         "for d in " +
         shims +
         "/*/; do\n"
         "  [ -d \"$d\" ] || continue\n"
         "  d=${d%/}; n=${d##*/}\n"
         "  case $n in *[!A-Za-z0-9._-]*) continue ;; esac\n"
         "  printf 'shim-dir 0 %s\\n' \"$n\"\n"
         "done\n"
         "if l=$(launchctl print gui/" +
         std::to_string(uid) +
         " 2>/dev/null); then\n"
         "  n=$(printf '%s' \"$l\" | wc -c); printf 'labels %s -\\n' $((n)); printf '%s' \"$l\"\n"
         "else\n"
         "  printf 'no-gui 0 -\\n'\n"
         "fi\n"
         "exit 0\n";
}

std::set<std::string> loaded_labels_in(std::string_view launchctl_print) {
  std::set<std::string> labels;
  std::istringstream lines{std::string(launchctl_print)};
  std::string line;
  int depth = 0; // 0 outside, 1 inside the services block, >1 nested in it
  const std::string prefix = guest::agent_label("");
  while (std::getline(lines, line)) {
    const std::vector<std::string> words = split_words(line);
    if (depth == 0) {
      if (words.size() == 3 && words[0] == "services" && words[1] == "=" && words[2] == "{") {
        depth = 1;
      }
      continue;
    }
    if (!words.empty() && words.back() == "{") {
      ++depth;
      continue;
    }
    if (words.size() == 1 && words[0] == "}") {
      --depth;
      continue;
    }
    if (depth == 1 && !words.empty() && util::starts_with(words.back(), prefix)) {
      labels.insert(words.back());
    }
  }
  return labels;
}

Result<GuestEnablement> parse_observation(std::string_view output) {
  LUME_UNLOCK_TRY_ASSIGN(auto records,
                         guest::read_guest_records(output, k_observe_what, k_observe_hint));
  GuestEnablement observed;
  for (guest::GuestRecord& record : records) {
    const std::string& tag = record.tag;
    const std::string& name = record.name;
    std::string& content = record.content;
    if (tag == "enablement") {
      observed.state.enablement_json = std::move(content);
    } else if (tag == "guard") {
      observed.state.guard_file = std::move(content);
    } else if (tag == "shim-record") {
      observed.shim_record = std::move(content);
    } else if (tag == "plist") {
      observed.state.agent_plists[name] = std::move(content);
    } else if (tag == "shim-dir") {
      observed.shim_dirs.insert(name);
    } else if (tag == "oversize") {
      const std::size_t space = name.find(' ');
      const std::string bytes = space == std::string::npos ? "" : name.substr(space + 1);
      if (bytes.empty() || bytes.find_first_not_of("0123456789") != std::string::npos) {
        return observe_error("unexpected output line " +
                             util::quote_for_message(tag + " 0 " + name));
      }
      return Error(ErrorCategory::guest,
                   "reading the enablement state of the guest",
                   "its " + name.substr(0, space) + " file is " + bytes + " bytes, more than the " +
                       util::describe_limit(k_max_observed_file_bytes) + " lume-unlock reads",
                   "lume-unlock never writes such a file: move it aside in the guest "
                   "('lume-unlock ssh NAME -- mv FILE FILE.aside'), then run 'lume-unlock create' "
                   "again to rewrite it");
    } else if (tag == "no-gui") {
      observed.gui_session = false;
    } else if (tag == "labels") {
      observed.state.loaded_labels = loaded_labels_in(content);
    } else {
      return observe_error("unknown record " + util::quote_for_message(tag));
    }
  }
  return observed;
}

Result<GuestEnablement> observe_enablement(guest::GuestSession& session,
                                           const guest::GuestFacts& facts) {
  LUME_UNLOCK_TRY_ASSIGN(auto command,
                         observe_command(facts.home, static_cast<std::uint32_t>(facts.uid)));
  auto ran = session.run(command);
  if (!ran.ok()) {
    return ran.error().with_context("reading the enablement state");
  }
  if (ran.value().exit_status != 0) {
    return observe_error(trim(ran.value().stderr_text));
  }
  return parse_observation(ran.value().stdout_text);
}

Result<EnablementTarget> enablement_target(const GuestEnablement& observed,
                                           const guest::GuestFacts& facts,
                                           const std::string& vm) {
  const std::string hint = "install it with 'lume-unlock create " + vm + "'";
  const std::string what = "enablement list of VM " + util::quote_for_message(vm);
  if (!observed.shim_record) {
    return Error(ErrorCategory::guest,
                 what,
                 "the shim is not installed in the guest (no " +
                     installed_shim_record_path(facts.home) + ")",
                 hint);
  }
  LUME_UNLOCK_TRY_ASSIGN(
      auto shim,
      parse_installed_shim(*observed.shim_record, installed_shim_record_path(facts.home)));
  if (observed.shim_dirs.count(shim.shim.sha256) == 0) {
    return Error(ErrorCategory::guest,
                 what,
                 "the shim is not installed in the guest (its directory shim/" + shim.shim.sha256 +
                     " is missing)",
                 hint);
  }
  LUME_UNLOCK_TRY_ASSIGN(
      auto shared_layout,
      guest::GuestLayout::make(facts.home, shim.shim.sha256, shim.shim_file_name()));
  // Each run stages in its own directory, so concurrent runs never remove each other's files.
  LUME_UNLOCK_TRY_ASSIGN(auto layout, shared_layout.with_run_id(util::random_hex(16)));
  enablement::AgentSettings settings;
  settings.inject_variable = shim.inject_env;
  return EnablementTarget{
      layout, settings, static_cast<std::uint32_t>(facts.uid), shim, facts.product_version};
}

Result<enablement::EnablementList> applied_list(const GuestEnablement& observed) {
  if (!observed.state.enablement_json) {
    return enablement::EnablementList{};
  }
  return enablement::parse_enablement_json(*observed.state.enablement_json, "enablement.json");
}

Result<GuestEnablementView> read_guest_enablement(guest::GuestSession& session,
                                                  const std::string& vm) {
  LUME_UNLOCK_TRY_ASSIGN(auto facts, guest::gather_guest_facts(session));
  LUME_UNLOCK_TRY_ASSIGN(auto observed, observe_enablement(session, facts));
  LUME_UNLOCK_TRY_ASSIGN(auto target, enablement_target(observed, facts, vm));
  LUME_UNLOCK_TRY_ASSIGN(auto list, applied_list(observed));
  return GuestEnablementView{facts, observed, target, list};
}

} // namespace lume_unlock::apply

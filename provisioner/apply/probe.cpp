#include "apply/probe.hpp"

#include "guest/shell_quote.hpp"
#include "util/json_reader.hpp"

#include <set>

namespace lume_unlock::apply {

namespace {

constexpr const char* k_separator = "--- lume-unlock probe: unlocked ---";

Result<std::string> assignments(const std::map<std::string, std::string>& env) {
  std::string line;
  for (const auto& [key, value] : env) {
    LUME_UNLOCK_TRY_ASSIGN(auto quoted, guest::shell_quote(value));
    line += key + "=" + quoted + " ";
  }
  return line;
}

} // namespace

Result<std::string> probe_command(const InstalledShim& shim,
                                  const enablement::Profile& profile,
                                  const std::map<std::string, std::string>& extra_env) {
  if (!shim.probe) {
    return Error(ErrorCategory::usage,
                 "probe of the " + shim.platform + " shim",
                 "the installed bundle has no probe for this platform",
                 "install a bundle built with the probe (the 'shim-bundle' build target)");
  }
  std::map<std::string, std::string> base;
  std::map<std::string, std::string> injected;
  if (shim.inject_env == "LD_PRELOAD") {
    // glibc splits LD_PRELOAD at spaces and "Application Support" has one: name the shim by
    // its file name and let the loader find it (and the support libraries) in the shim's
    // directory through LD_LIBRARY_PATH, which splits only at ':' and ';'.
    base["LD_LIBRARY_PATH"] = guest::parent_of(shim.shim.path);
    injected = base;
    injected["LD_PRELOAD"] = shim.shim_file_name();
  } else {
    injected[shim.inject_env] = shim.shim.path;
  }
  injected["LUME_METAL_APPLE_FAMILY_MAX"] = std::to_string(profile.apple_family_max);
  injected["LUME_METAL_MAX_THREADGROUP_MEMORY"] = std::to_string(profile.max_threadgroup_memory);
  for (const auto& [key, value] : extra_env) {
    injected[key] = value;
  }
  LUME_UNLOCK_TRY_ASSIGN(auto probe, guest::shell_join({shim.probe->path, "--json"}));
  LUME_UNLOCK_TRY_ASSIGN(auto stock_env, assignments(base));
  LUME_UNLOCK_TRY_ASSIGN(auto unlocked_env, assignments(injected));
  return "cd / && " + stock_env + probe + "; echo " + guest::shell_quote(k_separator).value() +
         "; " + unlocked_env + probe;
}

Result<ProbeRun> parse_probe_output(const guest::CommandResult& result) {
  const std::string& text = result.stdout_text;
  const std::string marker = std::string(k_separator) + "\n";
  const auto at = text.find(marker);
  const std::string stock_text = at == std::string::npos ? text : text.substr(0, at);
  const std::string unlocked_text =
      at == std::string::npos ? std::string() : text.substr(at + marker.size());
  ProbeRun run;
  const auto parse =
      [&](const std::string& part, const char* which, nlohmann::json& into) -> Status {
    into = util::parse_json(part).value;
    if (into.is_discarded() || !into.is_object()) {
      std::string why = "the " + std::string(which) + " run printed no JSON document";
      if (!result.stderr_text.empty()) {
        why += " (stderr: " + result.stderr_text.substr(0, 400) + ")";
      }
      return Error(ErrorCategory::guest,
                   "probe in the guest",
                   why,
                   "run the probe by hand with 'lume-unlock ssh NAME -- …/lume-unlock-probe "
                   "--json' to see why");
    }
    return ok_status();
  };
  LUME_UNLOCK_TRY(parse(stock_text, "stock", run.stock));
  LUME_UNLOCK_TRY(parse(unlocked_text, "unlocked", run.unlocked));
  return run;
}

Result<ProbeRun> run_probes(guest::GuestSession& session,
                            const InstalledShim& shim,
                            const enablement::Profile& profile,
                            const std::map<std::string, std::string>& extra_env) {
  LUME_UNLOCK_TRY_ASSIGN(auto command, probe_command(shim, profile, extra_env));
  LUME_UNLOCK_TRY_ASSIGN(auto result, session.run(command));
  return parse_probe_output(result);
}

namespace {

/// The answer of `code` in a probe document, or nothing when the probe did not report it.
std::optional<bool> family(const nlohmann::json& doc, long code) {
  const auto families = doc.find("families");
  if (families == doc.end() || !families->is_object()) {
    return std::nullopt;
  }
  const auto answer = families->find(std::to_string(code));
  if (answer == families->end() || !answer->is_boolean()) {
    return std::nullopt;
  }
  return answer->get<bool>();
}

std::uint64_t unsigned_at(const nlohmann::json& doc, const char* key) {
  const auto value = doc.find(key);
  return value != doc.end() && value->is_number_unsigned() ? value->get<std::uint64_t>() : 0;
}

bool is_apple_family(long code) {
  return code >= 1001 && code <= 1999;
}

} // namespace

ProbeVerdict judge_probe(const nlohmann::json& stock,
                         const nlohmann::json& unlocked,
                         const enablement::Profile& profile,
                         bool shim_reports_state) {
  ProbeVerdict verdict;
  if (!stock.is_object() || !unlocked.is_object()) {
    verdict.problems.push_back("the probe printed no JSON document");
    return verdict;
  }
  verdict.stock_threadgroup_memory = unsigned_at(stock, "max_threadgroup_memory");
  verdict.unlocked_threadgroup_memory = unsigned_at(unlocked, "max_threadgroup_memory");
  const long ceiling = static_cast<long>(profile.apple_family_max);
  for (long code = 1001; code <= ceiling; ++code) {
    const auto answer = family(unlocked, code);
    if (answer.has_value() && !*answer) {
      verdict.problems.push_back("Apple family " + std::to_string(code) +
                                 " answered false with the shim (expected true through " +
                                 std::to_string(ceiling) + ")");
    }
  }
  if (const auto above = family(unlocked, ceiling + 1); above.value_or(false)) {
    verdict.problems.push_back("Apple family " + std::to_string(ceiling + 1) +
                               " answered true with the shim (the ceiling is " +
                               std::to_string(ceiling) + ")");
  }
  std::set<std::string> codes;
  for (const auto* doc : {&stock, &unlocked}) {
    if (doc->contains("families") && (*doc)["families"].is_object()) {
      for (const auto& item : (*doc)["families"].items()) {
        codes.insert(item.key());
      }
    }
  }
  for (const std::string& key : codes) {
    const long code = std::stol(key);
    const auto before = family(stock, code);
    const auto after = family(unlocked, code);
    if (before != after) {
      verdict.changed_families.push_back(key);
      if (!is_apple_family(code)) {
        verdict.problems.push_back(
            "family " + key + " answered " + (after ? (*after ? "true" : "false") : "nothing") +
            " with the shim but " + (before ? (*before ? "true" : "false") : "nothing") +
            " stock (only Apple families may change)");
      }
    }
  }
  const std::string state = unlocked.value("/shim/state"_json_pointer, std::string("absent"));
  if (shim_reports_state && state != "active") {
    const std::string reason = unlocked.value("/shim/reason"_json_pointer, std::string());
    std::string problem = "the shim is " + state + " in the unlocked probe run" +
                          (reason.empty() ? std::string() : " (" + reason + ")");
    if (reason == "private_init_missing") {
      problem += ": this macOS has no -[_MTLDevice initGPUFamilySupport], the one way in of the "
                 "certified build, so the shim leaves the device stock";
    } else if (reason == "device_hooks_incomplete") {
      problem += ": the device's class lacks a capability method the shim replaces, so it stays "
                 "stock";
    }
    verdict.problems.push_back(problem);
  }
  if (verdict.unlocked_threadgroup_memory < profile.max_threadgroup_memory) {
    verdict.problems.push_back("max_threadgroup_memory is " +
                               std::to_string(verdict.unlocked_threadgroup_memory) +
                               " with the shim (expected at least " +
                               std::to_string(profile.max_threadgroup_memory) + ")");
  }
  if (unlocked.value("/mlx/residency_sets"_json_pointer, false)) {
    verdict.problems.push_back(
        "MLX would use residency sets with the shim (a Metal family answer leaked)");
  }
  return verdict;
}

Status require_probe_pass(const ProbeVerdict& verdict, const std::string& vm) {
  if (verdict.ok()) {
    return ok_status();
  }
  std::string why = verdict.problems.front();
  if (verdict.problems.size() > 1) {
    why += " (and " + std::to_string(verdict.problems.size() - 1) + " more problem" +
           (verdict.problems.size() > 2 ? "s" : "") + ")";
  }
  return Error(ErrorCategory::verification,
               "probe check in VM '" + vm + "'",
               why,
               "run 'lume-unlock verify " + vm +
                   " --json' for both probe answers; check the guest's macOS version and the "
                   "shim bundle");
}

} // namespace lume_unlock::apply

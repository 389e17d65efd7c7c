#include "apply/probe_runner.hpp"

#include "guest/shell_quote.hpp"
#include "util/json_parse.hpp"

namespace lume_unlock::apply {

namespace {

constexpr const char* k_separator = "--- lume-unlock probe: unlocked ---";

std::string directory_of(const std::string& path) {
  return path.substr(0, path.find_last_of('/'));
}

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
    base["LD_LIBRARY_PATH"] = directory_of(shim.shim.path);
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
  auto probe = guest::shell_join({shim.probe->path, "--json"});
  auto stock_env = assignments(base);
  auto unlocked_env = assignments(injected);
  auto separator = guest::shell_quote(k_separator);
  if (!probe.ok()) {
    return probe.error();
  }
  if (!stock_env.ok()) {
    return stock_env.error();
  }
  if (!unlocked_env.ok()) {
    return unlocked_env.error();
  }
  return "cd / && " + stock_env.value() + probe.value() + "; echo " + separator.value() + "; " +
         unlocked_env.value() + probe.value();
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

} // namespace lume_unlock::apply

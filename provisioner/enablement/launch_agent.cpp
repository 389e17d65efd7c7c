#include "enablement/enablement_plan.hpp"
#include "util/encoding.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <map>
#include <set>

namespace lume_unlock::enablement {

namespace {

const char* const k_plist_header = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                   "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
                                   "\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
                                   "<plist version=\"1.0\">\n";

std::string string_element(std::string_view text, const std::string& indent) {
  return indent + "<string>" + util::xml_escape(text) + "</string>\n";
}

std::string bool_element(bool value, const std::string& indent) {
  return indent + (value ? "<true/>\n" : "<false/>\n");
}

/// A dictionary of strings, keys in byte order (std::map).
std::string string_dict(const std::map<std::string, std::string>& values,
                        const std::string& indent) {
  std::string out = indent + "<dict>\n";
  for (const auto& [key, value] : values) {
    out += indent + "\t<key>" + util::xml_escape(key) + "</key>\n";
    out += string_element(value, indent + "\t");
  }
  out += indent + "</dict>\n";
  return out;
}

} // namespace

Result<std::map<std::string, std::string>> agent_environment(const EnablementEntry& entry,
                                                             const guest::GuestLayout& layout,
                                                             const AgentSettings& settings) {
  LUME_UNLOCK_TRY(validate(entry));
  if (!is_env_name(settings.inject_variable)) {
    return Error(ErrorCategory::usage,
                 "launch agent of " + entry_label(entry.name),
                 "injection variable " + util::quote_for_message(settings.inject_variable) +
                     " is not a variable name");
  }
  const Profile& profile = effective_profile(entry, settings.default_profile);
  std::map<std::string, std::string> environment = {
      {settings.inject_variable, layout.shim_path()},
      {k_env_apple_family_max, std::to_string(profile.apple_family_max)},
      {k_env_max_threadgroup_memory, std::to_string(profile.max_threadgroup_memory)},
      {k_env_enablement, layout.guard_file_path()},
  };
  if (settings.inject_variable == "LD_PRELOAD") {
    // glibc splits LD_PRELOAD at spaces and colons, with no escape, so "Application Support"
    // cannot appear in it. A bare file name is looked up like a needed library instead:
    // through LD_LIBRARY_PATH (split at ':' and ';' only), which also finds the support
    // libraries installed next to the shim.
    environment[settings.inject_variable] = util::base_name(layout.shim_path());
    environment["LD_LIBRARY_PATH"] = layout.shim_dir();
  }
  for (const auto& [key, value] : entry.env) {
    if (!environment.emplace(key, value).second) {
      return Error(ErrorCategory::usage,
                   entry_label(entry.name),
                   "env key " + util::quote_for_message(key) + " is set by lume-unlock");
    }
  }
  return environment;
}

Result<std::string> render_launch_agent(const EnablementEntry& entry,
                                        const guest::GuestLayout& layout,
                                        const AgentSettings& settings) {
  LUME_UNLOCK_TRY_ASSIGN(auto environment, agent_environment(entry, layout, settings));

  // Top-level keys, pre-rendered, emitted in byte order.
  std::map<std::string, std::string> top;
  top["EnvironmentVariables"] = string_dict(environment, "\t");
  top["KeepAlive"] = bool_element(entry.keep_alive, "\t");
  top["Label"] = string_element(guest::agent_label(entry.name), "\t");
  std::string arguments = "\t<array>\n" + string_element(entry.program, "\t\t");
  for (const std::string& arg : entry.args) {
    arguments += string_element(arg, "\t\t");
  }
  arguments += "\t</array>\n";
  top["ProgramArguments"] = arguments;
  top["RunAtLoad"] = bool_element(true, "\t");
  top["StandardErrorPath"] = string_element(layout.stderr_log_path(entry.name), "\t");
  top["StandardOutPath"] = string_element(layout.stdout_log_path(entry.name), "\t");

  std::string out = k_plist_header;
  out += "<dict>\n";
  for (const auto& [key, value] : top) {
    out += "\t<key>" + key + "</key>\n" + value;
  }
  out += "</dict>\n</plist>\n";
  return out;
}

Result<std::vector<RenderedAgent>> render_agents(const EnablementList& list,
                                                 const guest::GuestLayout& layout,
                                                 const AgentSettings& settings) {
  std::vector<RenderedAgent> agents;
  for (const EnablementEntry& entry : list.entries) {
    if (!entry.agent) {
      continue;
    }
    LUME_UNLOCK_TRY_ASSIGN(auto plist, render_launch_agent(entry, layout, settings));
    RenderedAgent agent;
    agent.name = entry.name;
    agent.label = guest::agent_label(entry.name);
    agent.plist_path = layout.agent_plist_path(entry.name);
    agent.sha256 = util::sha256_hex(plist);
    agent.content = std::move(plist);
    agents.push_back(std::move(agent));
  }
  return agents;
}

std::string render_guard_file(const EnablementList& list) {
  std::set<std::string> programs;
  for (const EnablementEntry& entry : list.entries) {
    programs.insert(guarded_path(entry));
  }
  std::string out =
      "# lume-unlock: executables the Metal capability shim may enable (LUME_UNLOCK_ENABLEMENT).\n"
      "# Generated from enablement.json; change it with 'lume-unlock allow add/remove', not by "
      "hand.\n";
  for (const std::string& program : programs) {
    out += program + '\n';
  }
  return out;
}

std::string gui_domain(std::uint32_t uid) {
  return "gui/" + std::to_string(uid);
}

Argv launchctl_bootstrap(std::uint32_t uid, const std::string& plist_path) {
  return {"launchctl", "bootstrap", gui_domain(uid), plist_path};
}

Argv launchctl_bootout(std::uint32_t uid, const std::string& label) {
  return {"launchctl", "bootout", gui_domain(uid) + "/" + label};
}

Argv launchctl_print(std::uint32_t uid, const std::string& label) {
  return {"launchctl", "print", gui_domain(uid) + "/" + label};
}

Argv plutil_lint(const std::vector<std::string>& paths) {
  Argv argv = {"plutil", "-lint"};
  argv.insert(argv.end(), paths.begin(), paths.end());
  return argv;
}

} // namespace lume_unlock::enablement

#pragma once

#include "enablement/enablement_list.hpp"
#include "guest/guest_layout.hpp"
#include "util/result.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::enablement {

/// What the renderer needs besides the entry and the layout.
struct AgentSettings {
  /// The platform's injection variable, from the shim bundle's "inject_env":
  /// DYLD_INSERT_LIBRARIES (macOS) or LD_PRELOAD (Linux guests).
  std::string inject_variable = "DYLD_INSERT_LIBRARIES";
  /// The profile of entries that have none of their own.
  Profile default_profile = Profile::standard();
};

/// Environment variable names the renderer sets (besides the injection variable).
constexpr const char* k_env_apple_family_max = "LUME_METAL_APPLE_FAMILY_MAX";
constexpr const char* k_env_max_threadgroup_memory = "LUME_METAL_MAX_THREADGROUP_MEMORY";
constexpr const char* k_env_enablement = "LUME_UNLOCK_ENABLEMENT";

/// The LaunchAgent of `entry` as an XML property list (1.0, Apple DOCTYPE):
///   Label                 dev.lume-unlock.<name>
///   ProgramArguments      [program, args…], one <string> per argument, never a shell line
///   EnvironmentVariables  <inject_variable> = layout.shim_path(),
///                         LUME_METAL_APPLE_FAMILY_MAX / LUME_METAL_MAX_THREADGROUP_MEMORY = the
///                         effective profile (decimal), LUME_UNLOCK_ENABLEMENT = the guard file,
///                         plus the entry's own env. For LD_PRELOAD (Linux guests) the shim is
///                         named by file name and its directory given as LD_LIBRARY_PATH, since
///                         glibc splits LD_PRELOAD at the space in "Application Support".
///   RunAtLoad true, KeepAlive = entry.keep_alive,
///   StandardOutPath / StandardErrorPath = layout.stdout_log_path / stderr_log_path.
/// Every string is XML-escaped (& < > " '); dictionary keys are sorted and the layout is fixed,
/// so the same inputs always give the same bytes. Fails (category usage) when the entry is
/// invalid, the injection variable is not a variable name, or the entry's env sets a variable
/// the renderer owns.
Result<std::string> render_launch_agent(const EnablementEntry& entry,
                                        const guest::GuestLayout& layout,
                                        const AgentSettings& settings);

/// The environment an entry's process runs with (the plist's EnvironmentVariables, and what
/// `lume-unlock exec` sets): the injection variable, the profile, the guard file, then the
/// entry's env. Fails as render_launch_agent does.
Result<std::map<std::string, std::string>> agent_environment(const EnablementEntry& entry,
                                                             const guest::GuestLayout& layout,
                                                             const AgentSettings& settings);

/// One rendered agent plist, as the plan writes it and the provenance record names it.
struct RenderedAgent {
  std::string name;
  std::string label;      ///< dev.lume-unlock.<name>
  std::string plist_path; ///< layout.agent_plist_path(name)
  std::string content;    ///< render_launch_agent's bytes
  std::string sha256;     ///< of content
};

/// render_launch_agent for every entry with `agent: true`, in list order. Fails on the first
/// entry that cannot be rendered (see above).
Result<std::vector<RenderedAgent>> render_agents(const EnablementList& list,
                                                 const guest::GuestLayout& layout,
                                                 const AgentSettings& settings);

} // namespace lume_unlock::enablement

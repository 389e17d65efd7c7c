#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lume_unlock::enablement {

/// One command as a word list; the SSH layer quotes each word with shell_quote() and joins them.
using Argv = std::vector<std::string>;

/// "gui/<uid>": the launchd domain of the logged-in guest user's agents.
std::string gui_domain(std::uint32_t uid);

/// {"launchctl","bootstrap","gui/<uid>",<plist path>} — loads (and, with RunAtLoad, starts) an
/// agent.
Argv launchctl_bootstrap(std::uint32_t uid, const std::string& plist_path);
/// {"launchctl","bootout","gui/<uid>/<label>"} — stops and unloads it.
Argv launchctl_bootout(std::uint32_t uid, const std::string& label);
/// {"launchctl","kickstart","-k","gui/<uid>/<label>"} — (re)starts a loaded agent.
Argv launchctl_kickstart(std::uint32_t uid, const std::string& label);
/// {"launchctl","print","gui/<uid>/<label>"} — state of a loaded agent; fails when not loaded.
Argv launchctl_print(std::uint32_t uid, const std::string& label);
/// {"plutil","-lint",<path>…} — checks property lists before they are loaded.
Argv plutil_lint(const std::vector<std::string>& paths);

} // namespace lume_unlock::enablement

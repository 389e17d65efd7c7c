#pragma once

// Reading a guest's enablement state in one command (what `allow`, `exec` and create's
// enablement step start from), and the target a list is applied with: the installed shim's
// layout and settings.

#include "apply/shim_record.hpp"
#include "enablement/enablement_list.hpp"
#include "enablement/enablement_plan.hpp"
#include "enablement/launch_agent.hpp"
#include "guest/guest_layout.hpp"
#include "guest/guest_records.hpp"
#include "guest/session.hpp"
#include "util/result.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace lume_unlock::apply {

/// Everything `allow` needs to know about a guest, read with ONE command.
struct GuestEnablement {
  enablement::ObservedState state; ///< enablement.json, guard file, our plists, loaded labels
  std::optional<std::string> shim_record; ///< bytes of shim/current.json, when present
  std::set<std::string> shim_dirs;        ///< names of the directories under shim/
  /// False when `launchctl print gui/<uid>` failed: no user is logged in to the GUI, so launchd
  /// has no gui/<uid> domain to bootstrap agents into.
  bool gui_session = true;
};

/// The largest enablement.json, guard file, shim record or agent plist read from a guest. Ours
/// are a few KiB even with hundreds of entries; a larger one was written by someone else.
inline constexpr std::size_t k_max_observed_file_bytes = 1u << 20;

/// The one observe command for the user whose $HOME is `home` and whose launchd domain is
/// gui/<uid>. It prints records "<tag> <size> <name>\n" followed by <size> bytes: tags
/// enablement, guard, shim-record, plist (name = file name), shim-dir (size 0), labels (the
/// output of `launchctl print gui/<uid>`, when it succeeds) and no-gui (size 0, when it fails).
/// A file over k_max_observed_file_bytes is not sent: "oversize 0 <tag> <size>" stands for it.
Result<std::string> observe_command(const std::string& home, std::uint32_t uid);

/// Parses observe_command()'s output (category guest when it is malformed).
Result<GuestEnablement> parse_observation(std::string_view output);

/// The dev.lume-unlock.* labels in the services block of `launchctl print gui/<uid>`.
std::set<std::string> loaded_labels_in(std::string_view launchctl_print);

/// Runs observe_command() (one round trip) and parses it.
Result<GuestEnablement> observe_enablement(guest::GuestSession& session,
                                           const guest::GuestFacts& facts);

/// What the enablement of a guest is computed with: the installed shim's layout and settings.
struct EnablementTarget {
  guest::GuestLayout layout;
  enablement::AgentSettings settings;
  std::uint32_t uid = 0;
  InstalledShim shim;
  /// The guest's `sw_vers -productVersion`: programs built for a newer macOS are refused.
  std::optional<std::string> guest_macos;
};

/// The target for a guest whose shim is installed: parses the shim record, checks that its
/// directory exists, and builds the layout (facts.home, staging in a fresh
/// staging/<random run id>) and settings (its injection variable).
/// When the shim is missing: category guest, "shim not installed", hint `lume-unlock create
/// <vm>`.
Result<EnablementTarget> enablement_target(const GuestEnablement& observed,
                                           const guest::GuestFacts& facts,
                                           const std::string& vm);

/// What `allow` and `exec` read from a guest before they act (2 commands: facts, observe).
struct GuestEnablementView {
  guest::GuestFacts facts;
  GuestEnablement observed;
  EnablementTarget target;
  enablement::EnablementList list; ///< as applied (enablement.json), empty when none
};

/// Gathers facts, observes, and requires an installed shim (see enablement_target).
Result<GuestEnablementView> read_guest_enablement(guest::GuestSession& session,
                                                  const std::string& vm);

/// The list as applied in the guest (enablement.json), or an empty list when there is none.
Result<enablement::EnablementList> applied_list(const GuestEnablement& observed);

} // namespace lume_unlock::apply

#pragma once

#include "guest/session.hpp"
#include "util/result.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::guest {

/// What the provisioner needs to know about a guest, gathered with one command.
struct GuestFacts {
  std::optional<std::string>
      product_version; ///< `sw_vers -productVersion` ("26.5.2"); absent off macOS
  std::optional<std::string> build_version; ///< `sw_vers -buildVersion` ("25F84")
  std::string kernel;                       ///< `uname -s` ("Darwin"; guest-sim says "Linux")
  std::string machine;                      ///< `uname -m` ("arm64", "x86_64")
  unsigned long uid = 0;                    ///< `id -u` (the launchd domain is gui/<uid>)
  std::string home;                         ///< `echo "$HOME"`: never assume /Users/lume

  bool operator==(const GuestFacts& other) const;
};

/// The one command that prints every fact as NUL-terminated `key=value` records, so values with
/// spaces or newlines (a home directory) survive.
const std::string& guest_facts_command();

/// Parses the output of guest_facts_command(). An error (category guest) names the missing or
/// malformed fact; empty sw_vers values mean "not macOS" and leave the versions absent.
Result<GuestFacts> parse_guest_facts(std::string_view output);

/// Runs guest_facts_command() in `session` (one round trip) and parses its output.
Result<GuestFacts> gather_guest_facts(GuestSession& session);

} // namespace lume_unlock::guest

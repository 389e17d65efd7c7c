#pragma once

// Guest commands that report several things in one round trip: the record framing
// "<tag> <size> <name>\n" followed by exactly <size> bytes (so any bytes pass unambiguously),
// the guest's facts, and the SHA-256 of many guest files.

#include "guest/session.hpp"
#include "util/result.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::guest {

/// One record: its tag, the rest of its header line (may hold spaces) and its bytes.
struct GuestRecord {
  std::string tag;
  std::string name;
  std::string content;
};

/// A POSIX shell function for the guest side: `put TAG NAME TEXT` writes TEXT as one record
/// (command substitution has already dropped its trailing newlines; $((n)) trims the spaces
/// macOS's wc pads with).
inline constexpr const char* k_put_record_function =
    "put() { n=$(printf '%s' \"$3\" | wc -c); printf '%s %s %s\\n' \"$1\" $((n)) \"$2\"; "
    "printf '%s' \"$3\"; }\n";

/// Splits `output` into its records. A malformed header or a record cut short is an error
/// (category guest) whose what is `what` and whose why quotes the header.
Result<std::vector<GuestRecord>>
read_guest_records(std::string_view output, const std::string& what, const std::string& hint);

/// What the provisioner needs to know about a guest, gathered with one command.
struct GuestFacts {
  std::optional<std::string> product_version; ///< `sw_vers -productVersion` ("26.5.2")
  std::optional<std::string> build_version;   ///< `sw_vers -buildVersion` ("25F84")
  std::string kernel;                         ///< `uname -s` ("Darwin"; guest-sim: "Linux")
  std::string machine;                        ///< `uname -m` ("arm64", "x86_64")
  unsigned long uid = 0;                      ///< `id -u` (the launchd domain is gui/<uid>)
  std::string home;                           ///< `echo "$HOME"`: never assume /Users/lume

  bool operator==(const GuestFacts& other) const;
};

/// Parses the output of the facts command (each fact a record "fact <size> <key>", so values
/// with spaces or newlines survive). An error (category guest) names the missing or
/// malformed fact; empty sw_vers values mean "not macOS" and leave the versions absent.
Result<GuestFacts> parse_guest_facts(std::string_view output);

/// Runs the facts command in `session` (one round trip) and parses its output.
Result<GuestFacts> gather_guest_facts(GuestSession& session);

/// path → SHA-256 (lower-case hex) from `shasum -a 256` output: "<hex>  <path>" (or "<hex>
/// *<path>" in binary mode) per line; other lines are ignored.
std::map<std::string, std::string> parse_shasum_output(const std::string& output);

/// What a symbolic link reads as in hash_guest_files' result: "-> " and its target, which no
/// SHA-256 can equal.
std::string link_state(const std::string& target);

/// The SHA-256 of each of `paths` in the guest, in ONE command (`shasum -a 256`, every path
/// quoted): a path that is missing or unreadable is absent from the result, and a symbolic link
/// maps to link_state(its target), so a link and a copy are told apart. Fails (usage) for a path
/// holding a control character, which shasum would print escaped, and on a transport error.
Result<std::map<std::string, std::string>> hash_guest_files(GuestSession& session,
                                                            const std::vector<std::string>& paths);

} // namespace lume_unlock::guest

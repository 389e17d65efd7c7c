#pragma once

// The framing of a guest command that reports several things at once: records
// "<tag> <size> <name>\n" followed by exactly <size> bytes, so any bytes (newlines, binary) pass
// through one round trip unambiguously.

#include "util/result.hpp"

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

} // namespace lume_unlock::guest

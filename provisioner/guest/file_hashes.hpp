#pragma once

#include "guest/session.hpp"
#include "util/result.hpp"

#include <map>
#include <string>
#include <vector>

namespace lume_unlock::guest {

/// path → SHA-256 (lower-case hex) from `shasum -a 256` output: "<hex>  <path>" (or "<hex>
/// *<path>" in binary mode) per line; other lines are ignored.
std::map<std::string, std::string> parse_shasum_output(const std::string& output);

/// What a symbolic link reads as in hash_guest_files' result: "-> " and its target, which no
/// SHA-256 can equal.
std::string link_state(const std::string& target);

/// The SHA-256 of each of `paths` in the guest, in ONE command (`shasum -a 256`, every path
/// quoted with shell_quote): a path that is missing or unreadable is simply absent from the
/// result, and one that is a symbolic link maps to link_state(its target) instead of the bytes
/// it leads to, so a link and a copy are told apart. Fails (usage) for a path holding a control
/// character, which shasum would print escaped, and on a transport error.
Result<std::map<std::string, std::string>> hash_guest_files(GuestSession& session,
                                                            const std::vector<std::string>& paths);

} // namespace lume_unlock::guest

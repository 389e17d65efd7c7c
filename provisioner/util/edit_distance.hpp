#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::util {

/// Levenshtein distance between two strings (bytes).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `input`, if it is close enough to be a plausible typo
/// (distance at most max(1, input.size() / 3)) — for "did you mean ..." hints.
std::optional<std::string> closest_match(std::string_view input,
                                         const std::vector<std::string>& candidates);

/// The hint for an unknown key: "did you mean 'shim'? (known keys here: inject_env, shim)", or
/// only the parenthesised list when no key is close.
std::string unknown_key_hint(std::string_view input, const std::vector<std::string>& known);

} // namespace lume_unlock::util

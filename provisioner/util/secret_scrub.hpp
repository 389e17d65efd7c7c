#pragma once

#include <string>
#include <vector>

namespace lume_unlock::util {

/// What a scrubbed secret is replaced with.
inline constexpr const char* k_scrubbed_marker = "[scrubbed]";

/// `text` with every occurrence of each non-empty value in `secrets` replaced by
/// k_scrubbed_marker. Longer secrets are replaced first, so a secret that contains another is
/// scrubbed whole and no part of it is left behind. Empty values are ignored (an unset variable
/// must not turn every gap between characters into a marker).
std::string scrub_secrets(std::string text, std::vector<std::string> secrets);

} // namespace lume_unlock::util

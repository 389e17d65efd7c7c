#pragma once
// The enablement guard file named by LUME_UNLOCK_ENABLEMENT (DESIGN §4.1, §5).
#include <string_view>

namespace lume_unlock::policy {

/// True when `guard_text` lists `executable_path`. Format: one absolute path per line; lines whose
/// first non-blank character is '#' are comments; blank lines are skipped; CRLF line ends and
/// blanks around a path are tolerated. A relative entry never matches, and neither does an empty
/// or relative `executable_path`. Never allocates or throws.
bool guard_lists(std::string_view guard_text, std::string_view executable_path) noexcept;

} // namespace lume_unlock::policy

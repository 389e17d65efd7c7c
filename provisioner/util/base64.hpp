#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::util {

/// Standard base64 (RFC 4648 §4) with '=' padding.
std::string base64_encode(std::string_view bytes);

/// Decodes standard base64; padding is optional. nullopt on any other character or a
/// truncated group.
std::optional<std::string> base64_decode(std::string_view text);

} // namespace lume_unlock::util

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

/// Percent-encodes `text` for a URL query value (RFC 3986): the unreserved characters
/// (letters, digits, '-', '.', '_', '~') and the characters in `also_keep` stay as they are,
/// every other byte becomes %XX (upper-case hex). Lume's routes need '/' encoded; a registry's
/// token query reads scopes such as "repository:a/b:pull,push" with '/', ':' and ',' kept.
std::string percent_encode(std::string_view text, std::string_view also_keep = {});

/// `text` with &, <, >, " and ' replaced by XML entities; every other byte (UTF-8 included) is
/// kept. One function for the launchd plists and the report's SVG chart.
std::string xml_escape(std::string_view text);

} // namespace lume_unlock::util

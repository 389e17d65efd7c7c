#pragma once

#include <string>
#include <string_view>

namespace lume_unlock::util {

/// Percent-encodes `text` for a URL query value (RFC 3986): the unreserved characters
/// (letters, digits, '-', '.', '_', '~') and the characters in `also_keep` stay as they are,
/// every other byte becomes %XX (upper-case hex). Lume's routes need '/' encoded; a registry's
/// token query reads scopes such as "repository:a/b:pull,push" with '/', ':' and ',' kept.
std::string percent_encode(std::string_view text, std::string_view also_keep = {});

} // namespace lume_unlock::util

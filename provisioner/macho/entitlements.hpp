#pragma once

#include <string_view>

namespace lume_unlock::macho {

inline constexpr const char* k_allow_dyld_environment =
    "com.apple.security.cs.allow-dyld-environment-variables";
inline constexpr const char* k_disable_library_validation =
    "com.apple.security.cs.disable-library-validation";

/// True when the XML property list `plist` (an entitlements blob) has `<key>KEY</key>` followed,
/// after white space only, by `<true/>`. Anything else (false, absent, another value, malformed
/// text) is false: an entitlement is only granted when it is plainly there.
bool entitlement_is_true(std::string_view plist, std::string_view key);

} // namespace lume_unlock::macho

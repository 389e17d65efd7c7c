#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::oci {

/// One parsed `WWW-Authenticate` challenge (RFC 7235): a scheme and its auth-params.
/// Parameter names are lower-cased; values are unquoted.
struct AuthChallenge {
  std::string scheme; ///< lower-cased: "bearer", "basic"
  std::map<std::string, std::string> params;

  std::optional<std::string> param(const std::string& name) const;
};

/// Parses the first challenge of a header value such as
/// `Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:a/b:pull"`.
/// nullopt when there is no scheme or a parameter is malformed.
std::optional<AuthChallenge> parse_auth_challenge(std::string_view header);

} // namespace lume_unlock::oci

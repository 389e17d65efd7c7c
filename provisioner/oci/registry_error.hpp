#pragma once

#include "util/error.hpp"
#include "util/http_client.hpp"

#include <cstddef>
#include <string>

namespace lume_unlock::oci {

/// A registry answered with an unexpected HTTP status. Carries only what is safe to print: the
/// URL is redacted, Authorization headers are never kept.
struct RegistryHttpError {
  std::string method;
  std::string url; ///< redacted
  long status = 0;
  std::string registry_message; ///< "CODE: message" entries of the OCI errors[] body, "; "-joined
  std::string body_preview;     ///< capped preview, only when there is no errors[] message

  /// 5xx and 429 may succeed when retried.
  bool temporary() const { return status == 429 || status >= 500; }
  /// "GET <url> answered HTTP 404: MANIFEST_UNKNOWN: manifest unknown".
  std::string why() const;
  /// An Error (category registry) with `what_failed`, this as the why and a hint by status.
  Error to_error(const std::string& what_failed) const;
};

RegistryHttpError make_http_error(const std::string& method,
                                  const std::string& url,
                                  const util::HttpResponse& response);

/// The registry's errors[] as "CODE: message; ..." (empty when the body has none).
std::string registry_error_message(const std::string& body);

/// An Error for a request that got no HTTP response: category registry (exit 4), except a
/// registry that speaks plain HTTP where TLS was asked, which is a setup to change (usage, exit
/// 2). `ca_file` is the CA file the request trusted (empty: the system's), named when the
/// certificate did not verify.
Error transport_error(const std::string& what_failed,
                      const std::string& method,
                      const std::string& url,
                      const util::TransportError& error,
                      const std::string& ca_file = {});

} // namespace lume_unlock::oci

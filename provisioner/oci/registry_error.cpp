#include "oci/registry_error.hpp"

#include "util/json_reader.hpp"
#include "util/text_check.hpp"

#include <nlohmann/json.hpp>

namespace lume_unlock::oci {

std::string RegistryHttpError::why() const {
  std::string out = method + " " + url + " answered HTTP " + std::to_string(status);
  if (!registry_message.empty()) {
    out += ": " + registry_message;
  } else if (!body_preview.empty()) {
    out += ": " + body_preview;
  }
  return out;
}

Error RegistryHttpError::to_error(const std::string& what_failed) const {
  std::string hint;
  if (status == 401 || status == 403) {
    hint = "check access to the repository: set GHCR_USERNAME and GHCR_TOKEN for ghcr.io, or "
           "add the registry to the 'auths' of your Docker config.json";
  } else if (status == 404) {
    hint = "check the repository and tag (skopeo list-tags docker://REPOSITORY lists the tags)";
  } else if (temporary()) {
    hint = "the registry is failing or rate-limiting; retry later";
  }
  return Error(ErrorCategory::registry, what_failed, why(), hint);
}

std::string registry_error_message(const std::string& body) {
  auto json = util::parse_json(body).value;
  if (json.is_discarded() || !json.is_object()) {
    return {};
  }
  auto errors = json.find("errors");
  if (errors == json.end() || !errors->is_array()) {
    return {};
  }
  std::string out;
  for (const auto& entry : *errors) {
    if (!entry.is_object()) {
      continue;
    }
    // Not entry.value("code", ""): it throws when a hostile registry sends a code that is not a
    // string.
    std::string code =
        entry.contains("code") && entry["code"].is_string() ? entry["code"].get<std::string>() : "";
    std::string message = entry.contains("message") && entry["message"].is_string()
                              ? entry["message"].get<std::string>()
                              : "";
    std::string item = code.empty() ? message : (message.empty() ? code : code + ": " + message);
    if (item.empty()) {
      continue;
    }
    out += (out.empty() ? "" : "; ") + item;
  }
  return util::body_preview(out);
}

RegistryHttpError make_http_error(const std::string& method,
                                  const std::string& url,
                                  const util::HttpResponse& response) {
  RegistryHttpError e;
  e.method = method;
  e.url = util::redact_url(url);
  e.status = response.status;
  e.registry_message = registry_error_message(response.body);
  if (e.registry_message.empty()) {
    e.body_preview = util::body_preview(response.body);
  }
  return e;
}

Error transport_error(const std::string& what_failed,
                      const std::string& method,
                      const std::string& url,
                      const util::TransportError& error,
                      const std::string& ca_file) {
  std::string hint;
  switch (error.kind) {
  case util::TransportError::Kind::plain_http:
    return Error(ErrorCategory::usage,
                 what_failed,
                 util::url_host(url) +
                     " speaks plain HTTP; Lume reaches registries over HTTPS only (" + method +
                     " " + util::redact_url(url) + ": " + error.detail + ")",
                 "serve it over TLS with a certificate (docker-registry: http.tls.certificate "
                 "and http.tls.key in its config.yml), trust its CA on the Mac (Keychain) for "
                 "Lume and with --registry-ca FILE, the recipe's registry.ca or SSL_CERT_FILE "
                 "for lume-unlock; --insecure-registry HOST serves lume-unlock's own requests "
                 "only");
  case util::TransportError::Kind::connection_refused:
  case util::TransportError::Kind::resolve:
    hint = "check the registry host and that it is reachable";
    break;
  case util::TransportError::Kind::tls:
    hint = "the registry's TLS certificate did not verify against " +
           (ca_file.empty() ? std::string("the system's CAs") : "the CAs in " + ca_file) +
           "; name the CA that signed it with --registry-ca FILE, the recipe's registry.ca, or "
           "SSL_CERT_FILE";
    break;
  case util::TransportError::Kind::timeout:
    hint = "the registry did not answer in time; retry later";
    break;
  default:
    break;
  }
  return Error(ErrorCategory::registry,
               what_failed,
               method + " " + util::redact_url(url) + " failed: " + error.detail,
               hint);
}

} // namespace lume_unlock::oci

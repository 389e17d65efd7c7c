#include "signing/signing.hpp"
#include "util/json_reader.hpp"

namespace lume_unlock::signing {
namespace {

Error bad_payload(const std::string& why) {
  return Error(ErrorCategory::verification,
               "signature payload",
               why,
               "the signature manifest was not written by cosign or lume-unlock, or was altered");
}

const nlohmann::json* member(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) {
    return nullptr;
  }
  auto found = object.find(key);
  return found == object.end() ? nullptr : &*found;
}

} // namespace

std::string serialize_payload(const SimpleSigningPayload& payload) {
  // nlohmann::json sorts object keys, so the bytes depend on the values only.
  nlohmann::json document = {
      {"critical",
       {{"identity", {{"docker-reference", payload.docker_reference}}},
        {"image", {{"docker-manifest-digest", payload.manifest_digest.str()}}},
        {"type", cosign_signature_type}}}};
  if (payload.optional.is_object() && !payload.optional.empty()) {
    document["optional"] = payload.optional;
  }
  return document.dump();
}

Result<SimpleSigningPayload> parse_payload(std::string_view bytes) {
  nlohmann::json document = util::parse_json(bytes).value;
  if (document.is_discarded() || !document.is_object()) {
    return bad_payload("is not a JSON object");
  }
  const nlohmann::json* critical = member(document, "critical");
  if (critical == nullptr || !critical->is_object()) {
    return bad_payload("has no 'critical' object");
  }
  const nlohmann::json* type = member(*critical, "type");
  if (type == nullptr || !type->is_string() || *type != cosign_signature_type) {
    return bad_payload(std::string("critical.type is not '") + cosign_signature_type + "'");
  }
  const nlohmann::json* identity = member(*critical, "identity");
  const nlohmann::json* reference =
      identity == nullptr ? nullptr : member(*identity, "docker-reference");
  if (reference == nullptr || !reference->is_string()) {
    return bad_payload("critical.identity.docker-reference is missing or not a string");
  }
  const nlohmann::json* image = member(*critical, "image");
  // The simple-signing format capitalises the key ("Docker-manifest-digest" in its examples);
  // cosign writes it in lower case. Both are read.
  const nlohmann::json* digest =
      image == nullptr ? nullptr : member(*image, "docker-manifest-digest");
  if (digest == nullptr && image != nullptr) {
    digest = member(*image, "Docker-manifest-digest");
  }
  if (digest == nullptr || !digest->is_string()) {
    return bad_payload("critical.image.docker-manifest-digest is missing or not a string");
  }
  auto parsed = oci::Digest::parse(digest->get<std::string>());
  if (!parsed) {
    return bad_payload("critical.image.docker-manifest-digest is not a sha256 digest");
  }
  SimpleSigningPayload payload{reference->get<std::string>(), parsed.value(), {}};
  if (const nlohmann::json* optional = member(document, "optional");
      optional != nullptr && optional->is_object()) {
    payload.optional = *optional;
  }
  return payload;
}

} // namespace lume_unlock::signing

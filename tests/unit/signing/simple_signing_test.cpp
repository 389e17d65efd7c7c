#include "signing/signing.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lume_unlock::signing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const oci::Digest k_digest = oci::Digest::of_bytes("manifest bytes");

TEST(SimpleSigning, PayloadHasCosignsCriticalSectionAndOurOptionalClaims) {
  const std::string bytes = serialize_payload(
      {"127.0.0.1:5000/org/tahoe", k_digest, {{"lume-unlock", "0.4.0"}, {"recipe_sha256", "ab"}}});
  EXPECT_EQ(bytes,
            "{\"critical\":{\"identity\":{\"docker-reference\":\"127.0.0.1:5000/org/tahoe\"},"
            "\"image\":{\"docker-manifest-digest\":\"" +
                k_digest.str() +
                "\"},\"type\":\"cosign container image signature\"},"
                "\"optional\":{\"lume-unlock\":\"0.4.0\",\"recipe_sha256\":\"ab\"}}");
}

TEST(SimpleSigning, AnEmptyOptionalSectionIsLeftOut) {
  const std::string bytes = serialize_payload({"r/o/n", k_digest, nlohmann::json::object()});
  EXPECT_THAT(bytes, Not(HasSubstr("optional")));
}

TEST(SimpleSigning, ParseReadsWhatSerializeWrites) {
  const SimpleSigningPayload payload{"host/org/name", k_digest, {{"shim_bundle", "sha256:00"}}};
  auto parsed = parse_payload(serialize_payload(payload));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed.value(), payload);
}

TEST(SimpleSigning, TheCapitalisedDigestKeyOfTheSimpleSigningSpecIsRead) {
  auto parsed = parse_payload(
      R"({"critical":{"identity":{"docker-reference":"a/b"},"image":{"Docker-manifest-digest":")" +
      k_digest.str() + R"("},"type":"cosign container image signature"}})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed.value().manifest_digest, k_digest);
}

TEST(SimpleSigning, PayloadsThatAreNoCosignImageSignatureAreRefusedNamingTheField) {
  const std::string digest = k_digest.str();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[]", "/: expected an object, got an array"},
      {"{}", "/critical: missing (expected an object)"},
      {R"({"critical":{"type":"atomic container signature","identity":{"docker-reference":"a"},"image":{"docker-manifest-digest":")" +
           digest + R"("}}})",
       "/critical/type: expected 'cosign container image signature', got 'atomic container "
       "signature'"},
      {R"({"critical":{"type":"cosign container image signature","image":{"docker-manifest-digest":")" +
           digest + R"("}}})",
       "/critical/identity: missing (expected an object)"},
      {R"({"critical":{"type":"cosign container image signature","identity":{"docker-reference":"a"},"image":{"docker-manifest-digest":"sha256:xyz"}}})",
       "/critical/image/docker-manifest-digest: expected 64 hex characters after 'sha256:', got 3"},
  };
  for (const auto& [text, expected] : cases) {
    auto parsed = parse_payload(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.error().category(), ErrorCategory::verification);
    EXPECT_EQ(parsed.error().message(), "signature payload: " + expected);
  }
}

TEST(SignatureStore, TheSignatureTagIsTheDigestWithADashAndDotSig) {
  EXPECT_EQ(signature_tag(k_digest), "sha256-" + k_digest.hex() + ".sig");
  const oci::Reference image =
      oci::parse_reference("127.0.0.1:5000/org/n@" + k_digest.str()).value();
  const oci::Reference sig = signature_reference(image, k_digest);
  EXPECT_EQ(sig.str(), "127.0.0.1:5000/org/n:sha256-" + k_digest.hex() + ".sig");
}

} // namespace
} // namespace lume_unlock::signing

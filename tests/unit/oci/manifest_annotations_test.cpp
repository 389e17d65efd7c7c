#include "oci/manifest_annotations.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace lume_unlock::oci {
namespace {

// The shape of a Lume push (lume-oci.md §3.3), pretty-printed as Lume writes it, with a key
// Manifest does not know ("subject") that must survive.
const char* const k_lume_manifest = R"({
  "annotations" : {
    "org.trycua.lume.upload-time" : "2026-12-03T10:00:00Z"
  },
  "config" : {
    "digest" : "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "mediaType" : "application\/vnd.trycua.lume.config.v1+json",
    "size" : 611
  },
  "layers" : [
    {
      "annotations" : {"org.trycua.lume.part.offset" : "0"},
      "digest" : "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
      "mediaType" : "application\/vnd.trycua.lume.disk.v1",
      "size" : 18446744073709551000
    }
  ],
  "mediaType" : "application\/vnd.oci.image.manifest.v1+json",
  "schemaVersion" : 2,
  "subject" : {"digest" : "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"}
})";

TEST(ManifestAnnotations, AddsToTheManifestAndKeepsEveryOtherField) {
  auto annotated = with_manifest_annotations(k_lume_manifest,
                                             {{"dev.lume-unlock.bench.pp512.speedup", "10.00"},
                                              {"org.trycua.lume.upload-time", "replaced"}});
  ASSERT_TRUE(annotated.ok()) << annotated.error().message();
  const auto before = nlohmann::json::parse(k_lume_manifest);
  const auto after = nlohmann::json::parse(annotated.value());
  EXPECT_EQ(after["annotations"],
            nlohmann::json({{"dev.lume-unlock.bench.pp512.speedup", "10.00"},
                            {"org.trycua.lume.upload-time", "replaced"}}));
  nlohmann::json rest = after;
  rest.erase("annotations");
  nlohmann::json expected = before;
  expected.erase("annotations");
  EXPECT_EQ(rest, expected); // config, layers (sizes past 2^63 too), subject
  const auto parsed = parse_manifest(annotated.value());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed.value().layers.at(0).size, 18446744073709551000ull);
}

TEST(ManifestAnnotations, AManifestWithoutAnnotationsGetsThem) {
  auto annotated = with_manifest_annotations(R"({"schemaVersion":2,"layers":[]})", {{"k", "v"}});
  ASSERT_TRUE(annotated.ok());
  EXPECT_EQ(annotated.value(), R"({"annotations":{"k":"v"},"layers":[],"schemaVersion":2})");
}

TEST(ManifestAnnotations, RefusesWhatIsNotAManifestLumeCouldRead) {
  const std::pair<const char*, const char*> bad[] = {
      {"[]", "adding annotations to a manifest: the manifest is not a JSON object"},
      {"{\"layers\":", "adding annotations to a manifest: the manifest is not a JSON object"},
      {R"({"annotations":[]})",
       "adding annotations to a manifest: its 'annotations' is not an object"},
      {R"({"annotations":{"n":1}})",
       "adding annotations to a manifest: annotation 'n' is not a string"},
  };
  for (const auto& [bytes, message] : bad) {
    auto annotated = with_manifest_annotations(bytes, {{"k", "v"}});
    ASSERT_FALSE(annotated.ok()) << bytes;
    EXPECT_EQ(annotated.error().category(), ErrorCategory::registry);
    EXPECT_EQ(annotated.error().message(), message);
  }
}

} // namespace
} // namespace lume_unlock::oci

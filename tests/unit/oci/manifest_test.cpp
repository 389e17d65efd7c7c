#include "oci/manifest.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace lume_unlock::oci {
namespace {

const std::string k_hex_a = std::string(64, 'a');
const std::string k_hex_b = std::string(64, 'b');

Manifest lume_manifest() {
  Manifest m;
  m.media_type = media_type::oci_manifest;
  Descriptor config;
  config.media_type = media_type::lume_config;
  config.digest = Digest::from_sha256_hex(k_hex_a).value();
  config.size = 611;
  config.annotations[annotation::title] = "config.json";
  m.config = config;
  Descriptor disk;
  disk.media_type = media_type::lume_disk;
  disk.digest = Digest::from_sha256_hex(k_hex_b).value();
  disk.size = 201326592;
  disk.annotations = {{annotation::lume_part_number, "0"}, {annotation::lume_part_offset, "0"}};
  m.layers.push_back(disk);
  m.annotations[annotation::lume_upload_time] = "2026-08-12T09:30:00Z";
  return m;
}

TEST(Manifest, RoundTripsThroughJson) {
  const Manifest m = lume_manifest();
  auto parsed = parse_manifest(serialize(m));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed.value(), m);
  EXPECT_FALSE(parsed.value().is_index());
}

TEST(Manifest, SerializesExactlyTheOciKeys) {
  EXPECT_EQ(
      serialize(lume_manifest()),
      "{\"annotations\":{\"org.trycua.lume.upload-time\":\"2026-08-12T09:30:00Z\"},"
      "\"config\":{\"annotations\":{\"org.opencontainers.image.title\":\"config.json\"},"
      "\"digest\":\"sha256:" +
          k_hex_a +
          "\",\"mediaType\":\"application/vnd.trycua.lume.config.v1+json\",\"size\":611},"
          "\"layers\":[{\"annotations\":{\"org.trycua.lume.part.number\":\"0\",\"org.trycua.lume."
          "part.offset\":\"0\"},"
          "\"digest\":\"sha256:" +
          k_hex_b +
          "\",\"mediaType\":\"application/vnd.trycua.lume.disk.v1\",\"size\":201326592}],"
          "\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"schemaVersion\":2}");
}

TEST(Manifest, ReadsArtifactTypeAndIgnoresUnknownKeys) {
  const std::string text =
      "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
      "\"artifactType\":\"application/vnd.lume-unlock.shim-bundle.v1\",\"subject\":{},"
      "\"config\":{\"mediaType\":\"application/vnd.oci.empty.v1+json\",\"digest\":\"sha256:" +
      k_hex_a + "\",\"size\":2},\"layers\":[]}";
  auto parsed = parse_manifest(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed.value().artifact_type, std::string(media_type::shim_bundle));
  EXPECT_EQ(parsed.value().config->media_type, media_type::oci_empty);
}

TEST(Manifest, ReadsAnIndex) {
  const std::string text =
      "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.index.v1+json\","
      "\"manifests\":[{\"mediaType\":\"application/"
      "vnd.oci.image.manifest.v1+json\",\"digest\":\"sha256:" +
      k_hex_a + "\",\"size\":7}]}";
  auto parsed = parse_manifest(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_TRUE(parsed.value().is_index());
  ASSERT_EQ(parsed.value().manifests.size(), 1u);
  EXPECT_EQ(parsed.value().manifests[0].size, 7u);
  EXPECT_EQ(parse_manifest(serialize(parsed.value())).value(), parsed.value());
}

TEST(Manifest, RejectsMalformedManifestsNamingTheField) {
  const std::string good_layer =
      "{\"mediaType\":\"x\",\"digest\":\"sha256:" + k_hex_a + "\",\"size\":1}";
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"not json",
       "invalid manifest: /: not valid JSON: at byte 2: parse error at line 1, column 2: syntax "
       "error while parsing value - "
       "invalid literal; last read: 'no'"},
      {"[]", "invalid manifest: /: expected an object, got an array"},
      {"{\"schemaVersion\":1}", "invalid manifest: /schemaVersion: expected 2, got 1"},
      {"{}", "invalid manifest: /schemaVersion: missing (expected 2)"},
      {"{\"schemaVersion\":2,\"mediaType\":5}",
       "invalid manifest: /mediaType: expected a string, got an integer"},
      {"{\"schemaVersion\":2,\"layers\":{}}",
       "invalid manifest: /layers: expected an array, got an object"},
      {"{\"schemaVersion\":2,\"layers\":[" + good_layer + ",{\"mediaType\":\"x\",\"size\":1}]}",
       "invalid manifest: /layers/1/digest: missing (expected a string)"},
      {"{\"schemaVersion\":2,\"layers\":[{\"mediaType\":\"x\",\"digest\":\"sha256:short\",\"size\":"
       "1}]}",
       "invalid manifest: /layers/0/digest: expected 64 hex characters after 'sha256:', got 5"},
      {"{\"schemaVersion\":2,\"layers\":[{\"mediaType\":\"x\",\"digest\":\"sha256:" + k_hex_a +
           "\",\"size\":-1}]}",
       "invalid manifest: /layers/0/size: expected a non-negative integer, got an integer"},
      {"{\"schemaVersion\":2,\"config\":{\"digest\":\"sha256:" + k_hex_a + "\",\"size\":1}}",
       "invalid manifest: /config/mediaType: missing (expected a string)"},
      {"{\"schemaVersion\":2,\"annotations\":{\"a\":1}}",
       "invalid manifest: /annotations/a: expected a string, got an integer"},
  };
  for (const auto& c : cases) {
    auto parsed = parse_manifest(c.text);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_EQ(parsed.error().message(), c.message) << c.text;
    EXPECT_EQ(parsed.error().category(), ErrorCategory::registry) << c.text;
  }
}

TEST(Manifest, FetchedManifestDescribesItsBytes) {
  FetchedManifest fetched;
  fetched.bytes = serialize(lume_manifest());
  fetched.digest = Digest::of_bytes(fetched.bytes);
  fetched.media_type = media_type::oci_manifest;
  auto d = fetched.descriptor();
  EXPECT_EQ(d.size, fetched.bytes.size());
  EXPECT_EQ(d.digest, Digest::of_bytes(fetched.bytes));
  EXPECT_EQ(d.media_type, media_type::oci_manifest);
}

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
      {"[]", "adding annotations to a manifest: /: expected an object, got an array"},
      {"{\"layers\":",
       "adding annotations to a manifest: /: not valid JSON: it ends early, after 10 bytes"},
      {R"({"annotations":[]})",
       "adding annotations to a manifest: /annotations: expected an object, got an array"},
      {R"({"annotations":{"n":1}})",
       "adding annotations to a manifest: /annotations/n: expected a string, got an integer"},
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

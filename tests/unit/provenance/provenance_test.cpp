#include "provenance/provenance.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

namespace lume_unlock::provenance {
namespace {

Provenance full_record() {
  Provenance r;
  r.vm = "demo-vm";
  r.lume_url = "http://127.0.0.1:7777";
  r.image = ImageInfo{"ghcr.io/trycua/macos-tahoe-cua:latest",
                      "sha256:" + std::string(64, 'a'),
                      "sha256:" + std::string(64, 'a'),
                      "sha256:" + std::string(64, 'f')};
  r.hardware = HardwareInfo{8, 17179869184ull, 85899345920ull};
  r.guest = GuestInfo{"macOS", "26.5.2", "25F84", "arm64"};
  r.shim = ShimInfo{
      "0.1.0",
      "darwin-arm64",
      ShimProfile{1009, 65536},
      std::vector<FileHash>{
          {"/Users/lume/Library/Application Support/LumeUnlock/shim/x/liblume-unlock-shim.dylib",
           std::string(64, 'b')}},
      "ghcr.io/acme/lume-unlock-shim@sha256:" + std::string(64, 'e'),
      "sha256:" + std::string(64, 'e'),
      "sha256:" + std::string(64, 'f'),
      std::nullopt};
  r.enablement = std::vector<EnablementRecord>{{"llama-server",
                                                "/opt/llama.cpp/bin/llama-server",
                                                true,
                                                std::string(64, 'c'),
                                                std::nullopt,
                                                std::nullopt}};
  r.probe =
      ProbeInfo{nlohmann::json{{"process", "lume-unlock-probe"}, {"families", {{"1009", false}}}},
                nlohmann::json{{"process", "lume-unlock-probe"}, {"families", {{"1009", true}}}}};
  r.recipe = RecipeInfo{"image-recipes/tahoe-llm.yaml", std::string(64, 'd')};
  r.bench = nlohmann::json{{"entry", "llama-bench"},
                           {"tests", {{{"test", "pp512"}, {"speedup", 11.1}}}},
                           {"passed", true}};
  r.created_at = "2026-12-02T17:22:59Z";
  r.updated_at = "2026-12-02T18:00:00.5+01:00";
  return r;
}

bool same(const Provenance& a, const Provenance& b) {
  return to_json(a) == to_json(b);
}

TEST(Provenance, FullRecordHasExactlyTheDesignKeys) {
  auto json = to_json(full_record());
  std::vector<std::string> keys;
  for (const auto& [k, v] : json.items()) {
    keys.push_back(k);
  }
  EXPECT_EQ(keys,
            (std::vector<std::string>{"bench",
                                      "created_at",
                                      "enablement",
                                      "guest",
                                      "hardware",
                                      "image",
                                      "lume_url",
                                      "probe",
                                      "recipe",
                                      "schema",
                                      "shim",
                                      "updated_at",
                                      "vm"}));
  EXPECT_EQ(json["schema"], "lume-unlock/provenance/v1");
  EXPECT_EQ(json["image"].size(), 4u);
  EXPECT_EQ(json["image"]["signed_by"], "sha256:" + std::string(64, 'f'));
  EXPECT_EQ(json["hardware"]["memory_bytes"], 17179869184ull);
  EXPECT_EQ(json["shim"]["profile"],
            (nlohmann::json{{"apple_family_max", 1009}, {"max_threadgroup_memory", 65536}}));
  EXPECT_EQ(json["shim"]["files"][0].size(), 2u);
  EXPECT_EQ(json["shim"]["bundle_reference"],
            "ghcr.io/acme/lume-unlock-shim@sha256:" + std::string(64, 'e'));
  EXPECT_EQ(json["shim"]["bundle_digest"], "sha256:" + std::string(64, 'e'));
  EXPECT_EQ(json["shim"]["bundle_signed_by"], "sha256:" + std::string(64, 'f'));
  EXPECT_EQ(json["enablement"][0],
            (nlohmann::json{{"name", "llama-server"},
                            {"program", "/opt/llama.cpp/bin/llama-server"},
                            {"agent", true},
                            {"plist_sha256", std::string(64, 'c')}}));
}

TEST(Provenance, RoundTripsThroughJson) {
  auto parsed = parse_provenance(to_json(full_record()).dump());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_TRUE(same(parsed.value(), full_record()));
}

TEST(Provenance, AnExternalShimRoundTripsAndNeedsBothFields) {
  Provenance record = full_record();
  record.shim->external = FileHash{"dist/LumeMetalCapabilities-arm64.dylib", std::string(64, 'b')};
  const nlohmann::json json = to_json(record);
  EXPECT_EQ(json["shim"]["external"],
            nlohmann::json({{"dylib", "dist/LumeMetalCapabilities-arm64.dylib"},
                            {"sha256", std::string(64, 'b')}}));
  auto parsed = parse_provenance(json.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_TRUE(same(parsed.value(), record));
  EXPECT_FALSE(to_json(full_record())["shim"].contains("external"));
  nlohmann::json half = json;
  half["shim"]["external"].erase("sha256");
  auto refused = provenance_from_json(half);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(),
            "invalid provenance record: /shim/external/sha256: missing (expected a string)");
}

TEST(Provenance, EnablementOriginRoundTripsAndOlderRecordsWithoutItAreRecipeEntries) {
  Provenance record = full_record();
  record.enablement->push_back({"chat", "/opt/chat", false, std::nullopt, "allow", std::nullopt});
  auto parsed = parse_provenance(to_json(record).dump());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  ASSERT_EQ(parsed.value().enablement->size(), 2u);
  EXPECT_EQ(origin_of((*parsed.value().enablement)[1]), "allow");
  // A record written before the field existed still reads; its entries came from a recipe.
  EXPECT_FALSE(to_json(full_record())["enablement"][0].contains("origin"));
  EXPECT_EQ(origin_of((*parsed.value().enablement)[0]), "recipe");
  auto document = to_json(record);
  document["enablement"][1]["origin"] = "elsewhere";
  auto bad = provenance_from_json(document);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(),
            "invalid provenance record: /enablement/1/origin: expected 'recipe' or 'allow', got "
            "'elsewhere'");
}

TEST(Provenance, ResolvedProgramRoundTripsAndOlderRecordsHaveNone) {
  Provenance record = full_record();
  const EnablementRecord linked{"brew",
                                "/opt/homebrew/bin/hello",
                                false,
                                std::nullopt,
                                "allow",
                                "/opt/homebrew/Cellar/hello/1.0/bin/hello"};
  record.enablement->push_back(linked);
  auto document = to_json(record);
  EXPECT_EQ(document["enablement"][1]["resolved_program"],
            "/opt/homebrew/Cellar/hello/1.0/bin/hello");
  EXPECT_FALSE(document["enablement"][0].contains("resolved_program"));
  auto parsed = provenance_from_json(document);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ((*parsed.value().enablement)[1].resolved_program, linked.resolved_program);
  EXPECT_FALSE((*parsed.value().enablement)[0].resolved_program);
  document["enablement"][1]["resolved_program"] = 7;
  EXPECT_FALSE(provenance_from_json(document).ok());
}

TEST(Provenance, ArtifactsRoundTripAndEachMissingKeyIsNamed) {
  Provenance record = full_record();
  record.artifacts = std::vector<ArtifactRecord>{
      {"https://example.test/llama-b10167-bin-macos-arm64.tar.gz",
       std::string(64, '1'),
       1234,
       "/opt/llama.cpp",
       "tar.gz",
       {{"/opt/llama.cpp/llama-server", std::string(64, '2'), 99, "injectable", std::nullopt},
        {"/opt/llama.cpp/LICENSE", std::string(64, '3'), 7, std::nullopt, std::nullopt},
        {"/opt/llama.cpp/libllama.0.dylib", "", 0, std::nullopt, "libllama.0.0.10167.dylib"}}}};
  auto document = to_json(record);
  EXPECT_EQ(document["artifacts"][0]["files"][0]["macho"], "injectable");
  EXPECT_FALSE(document["artifacts"][0]["files"][1].contains("macho"));
  // A link is recorded by its path and target, with no bytes to hash.
  EXPECT_EQ(document["artifacts"][0]["files"][2],
            nlohmann::json({{"path", "/opt/llama.cpp/libllama.0.dylib"},
                            {"link", "libllama.0.0.10167.dylib"}}));
  auto parsed = provenance_from_json(document);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_TRUE(same(parsed.value(), record));
  EXPECT_FALSE(to_json(full_record()).contains("artifacts"));

  for (const char* key : {"source", "sha256", "size", "dest", "unpack"}) {
    auto broken = document;
    broken["artifacts"][0].erase(key);
    auto bad = provenance_from_json(broken);
    ASSERT_FALSE(bad.ok()) << key;
    EXPECT_THAT(bad.error().message(),
                testing::HasSubstr(std::string("/artifacts/0/") + key + ": missing (expected"));
  }
  auto unhashed = document;
  unhashed["artifacts"][0]["files"][1].erase("sha256");
  EXPECT_FALSE(provenance_from_json(unhashed).ok()) << "only a link may go without a digest";
  auto broken = document;
  broken["artifacts"][0]["files"][1]["size"] = -1;
  auto bad = provenance_from_json(broken);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(),
            "invalid provenance record: /artifacts/0/files/1/size: expected a non-negative "
            "integer, got an integer");
}

TEST(Provenance, UnknownValuesAreAbsentNotInvented) {
  Provenance r;
  r.vm = "vm1";
  r.image = ImageInfo{};
  r.image->reference = "ghcr.io/a/b:c";
  r.hardware = HardwareInfo{}; // nothing known: the key disappears
  r.guest = GuestInfo{};
  r.guest->arch = "arm64";
  EXPECT_EQ(to_json(r),
            (nlohmann::json{{"schema", "lume-unlock/provenance/v1"},
                            {"vm", "vm1"},
                            {"image", {{"reference", "ghcr.io/a/b:c"}}},
                            {"guest", {{"arch", "arm64"}}}}));
  auto back = provenance_from_json(to_json(r)).value();
  EXPECT_FALSE(back.image->digest.has_value());
  EXPECT_FALSE(back.image->lume_manifest_digest.has_value());
  EXPECT_FALSE(back.hardware.has_value());
  EXPECT_FALSE(back.shim.has_value());
  EXPECT_FALSE(back.created_at.has_value());
  EXPECT_FALSE(back.guest->os.has_value());
}

TEST(Provenance, RejectsWrongSchemaTypesAndTimes) {
  struct Case {
    nlohmann::json doc;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{{"schema", "other/v9"}, {"vm", "a"}},
       "invalid provenance record: /schema: expected 'lume-unlock/provenance/v1', got 'other/v9'"},
      {{{"schema", "lume-unlock/provenance/v1"}},
       "invalid provenance record: /vm: missing (expected a string)"},
      {{{"schema", "lume-unlock/provenance/v1"}, {"vm", "a"}, {"hardware", {{"cpu", "8"}}}},
       "invalid provenance record: /hardware/cpu: expected an integer, got a string"},
      {{{"schema", "lume-unlock/provenance/v1"}, {"vm", "a"}, {"hardware", {{"memory_bytes", -1}}}},
       "invalid provenance record: /hardware/memory_bytes: expected a non-negative integer, got "
       "an integer"},
      {{{"schema", "lume-unlock/provenance/v1"},
        {"vm", "a"},
        {"shim", {{"files", {{{"path", "/x"}}}}}}},
       "invalid provenance record: /shim/files/0/sha256: missing (expected a string)"},
      {{{"schema", "lume-unlock/provenance/v1"}, {"vm", "a"}, {"shim", {{"bundle_digest", 1}}}},
       "invalid provenance record: /shim/bundle_digest: expected a string, got an integer"},
      {{{"schema", "lume-unlock/provenance/v1"},
        {"vm", "a"},
        {"enablement", {{{"name", "x"}, {"agent", "yes"}}}}},
       "invalid provenance record: /enablement/0/agent: expected a boolean, got a string"},
      {{{"schema", "lume-unlock/provenance/v1"}, {"vm", "a"}, {"bench", "fast"}},
       "invalid provenance record: /bench: expected an object, got a string"},
      {{{"schema", "lume-unlock/provenance/v1"}, {"vm", "a"}, {"created_at", "yesterday"}},
       "invalid provenance record: /created_at: expected an RFC 3339 time, got 'yesterday'"},
  };
  for (const auto& c : cases) {
    auto parsed = provenance_from_json(c.doc);
    ASSERT_FALSE(parsed.ok()) << c.doc.dump();
    EXPECT_EQ(parsed.error().message(), c.message) << c.doc.dump();
  }
}

TEST(Provenance, WritesAtomicallyUnderTheStateDirAndReadsBack) {
  test::TempDir state;
  ASSERT_TRUE(write_provenance(state.path(), full_record()).ok());
  const std::string path = state / "vms/demo-vm/provenance.json";
  EXPECT_TRUE(std::filesystem::exists(path));
  // Only the final file: no temporary left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(state / "vms/demo-vm"),
                          std::filesystem::directory_iterator()),
            1);
  auto back = read_provenance(state.path(), "demo-vm");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(same(back.value(), full_record()));
}

TEST(Provenance, RejectsTraversalInVmNames) {
  for (const char* name : {"", ".", "..", "../x", "a/b", "caf\xc3\xa9"}) {
    auto path = provenance_path("/state", name);
    ASSERT_FALSE(path.ok()) << name;
    EXPECT_EQ(path.error().message(),
              "invalid VM name '" + std::string(name) +
                  "': use letters, digits, '.', '_' and '-' (not '.' or '..')");
  }
  EXPECT_EQ(provenance_path("/state", "vm_1.a-b").value(), "/state/vms/vm_1.a-b/provenance.json");
}

TEST(Provenance, ReadRejectsARecordOfAnotherVm) {
  test::TempDir state;
  ASSERT_TRUE(util::make_directories(state / "vms/b").ok());
  Provenance other;
  other.vm = "a";
  ASSERT_TRUE(util::write_file_atomic(state / "vms/b/provenance.json", to_json(other).dump()).ok());
  auto read = read_provenance(state.path(), "b");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message(),
            "invalid provenance record '" + state.path() +
                "/vms/b/provenance.json': it names VM 'a', not 'b'");
}

TEST(Provenance, Rfc3339Times) {
  EXPECT_TRUE(is_rfc3339(rfc3339_now())) << rfc3339_now();
  for (const char* good :
       {"2026-12-02T17:22:59Z", "2026-12-02T17:22:59.123Z", "2026-12-02T17:22:59-05:30"}) {
    EXPECT_TRUE(is_rfc3339(good)) << good;
  }
  for (const char* bad : {"2026-12-02 17:22:59Z",
                          "2026-12-02T17:22:59",
                          "2026-12-02T17:22:59.Z",
                          "26-12-02T17:22:59Z",
                          "2026-12-02T17:22:59+0530"}) {
    EXPECT_FALSE(is_rfc3339(bad)) << bad;
  }
}

// Which shim ran, named from the record: the certified digests are those of
// trycua/cua b296ec9c libs/lume/metal-capability-shim/Release/SHA256SUMS (docs/sources.md).
const std::string k_certified_arm64 =
    "515b9d84ab67e86d959282e95c194a5ad8a947261514b947d6f7483c57797b31";
const std::string k_certified_arm64e =
    "62504be341ed74191eab22f19e21d99b2afbe6cc029902c760578ffbbd0588cb";

ShimInfo external_shim(const std::string& digest) {
  ShimInfo shim;
  shim.files = std::vector<FileHash>{{"/guest/shim/" + digest + "/x.dylib", digest}};
  shim.external = FileHash{"dist/LumeMetalCapabilities-arm64.dylib", digest};
  return shim;
}

TEST(ShimIdentity, TheCertifiedDigestsAreTheTwoDylibsOfSha256Sums) {
  ASSERT_EQ(certified_builds().size(), 2u);
  EXPECT_EQ(certified_build(k_certified_arm64)->file,
            std::string("LumeMetalCapabilities-arm64.dylib"));
  EXPECT_EQ(certified_build(k_certified_arm64e)->file,
            std::string("LumeMetalCapabilities-arm64e.dylib"));
  // The probe and the source archive of the same SHA256SUMS are not shims.
  EXPECT_FALSE(certified_build("6e0f26c6c138b4c31379fb659cb5748d98db993d4d19c8db0f0e4a44ed714396"));
  EXPECT_FALSE(certified_build(std::string(64, 'a')));
}

TEST(ShimIdentity, AnExternalDylibIsCertifiedOnlyByItsExactDigest) {
  EXPECT_EQ(shim_that_ran(external_shim(k_certified_arm64)), "certified upstream build 515b9d84…");
  EXPECT_EQ(shim_that_ran(external_shim(k_certified_arm64e)), "certified upstream build 62504be3…");
  std::string near = k_certified_arm64;
  near.back() = '0';
  EXPECT_EQ(shim_that_ran(external_shim(near)), "external shim " + near);
}

TEST(ShimIdentity, OurShimIsNamedByItsDylibsDigestAndNothingIsInvented) {
  ShimInfo ours;
  ours.files =
      std::vector<FileHash>{{"/guest/shim/b/liblume-unlock-shim.dylib", std::string(64, 'b')},
                            {"/guest/bin/lume-unlock-probe", std::string(64, 'c')}};
  EXPECT_EQ(shim_that_ran(ours), "lume-unlock shim " + std::string(64, 'b'));
  // A record of our shim whose file happens to have a certified digest is still ours.
  ours.files->front().sha256 = k_certified_arm64;
  EXPECT_EQ(shim_that_ran(ours), "lume-unlock shim " + k_certified_arm64);
  EXPECT_EQ(shim_that_ran(ShimInfo{}), "");
}

} // namespace
} // namespace lume_unlock::provenance

#include "bundle/bundle.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lume_unlock::bundle {
namespace {

const std::string k_a(64, 'a');
const std::string k_b(64, 'b');
const std::string k_c(64, 'c');

BundleManifest sample() {
  BundleManifest m;
  m.version = "0.1.0";
  m.source_revision = "0123456789ab";
  m.platforms["linux-x86_64"] = PlatformEntry{"LD_PRELOAD",
                                              {"linux-x86_64/liblume-unlock-shim.so", k_a},
                                              BundleFile{"linux-x86_64/lume-unlock-probe", k_b},
                                              {{"linux-x86_64/libMetalEmu.so", k_c}}};
  m.platforms["darwin-arm64"] = PlatformEntry{"DYLD_INSERT_LIBRARIES",
                                              {"darwin-arm64/liblume-unlock-shim.dylib", k_a},
                                              BundleFile{"darwin-arm64/lume-unlock-probe", k_c},
                                              {}};
  return m;
}

TEST(BundleManifest, RendersTheContractKeysSorted) {
  EXPECT_EQ(render_bundle_manifest(sample()),
            "{\n"
            "  \"platforms\": {\n"
            "    \"darwin-arm64\": {\n"
            "      \"inject_env\": \"DYLD_INSERT_LIBRARIES\",\n"
            "      \"probe\": {\n"
            "        \"path\": \"darwin-arm64/lume-unlock-probe\",\n"
            "        \"sha256\": \"" +
                k_c +
                "\"\n"
                "      },\n"
                "      \"shim\": {\n"
                "        \"path\": \"darwin-arm64/liblume-unlock-shim.dylib\",\n"
                "        \"sha256\": \"" +
                k_a +
                "\"\n"
                "      },\n"
                "      \"support\": []\n"
                "    },\n"
                "    \"linux-x86_64\": {\n"
                "      \"inject_env\": \"LD_PRELOAD\",\n"
                "      \"probe\": {\n"
                "        \"path\": \"linux-x86_64/lume-unlock-probe\",\n"
                "        \"sha256\": \"" +
                k_b +
                "\"\n"
                "      },\n"
                "      \"shim\": {\n"
                "        \"path\": \"linux-x86_64/liblume-unlock-shim.so\",\n"
                "        \"sha256\": \"" +
                k_a +
                "\"\n"
                "      },\n"
                "      \"support\": [\n"
                "        {\n"
                "          \"path\": \"linux-x86_64/libMetalEmu.so\",\n"
                "          \"sha256\": \"" +
                k_c +
                "\"\n"
                "        }\n"
                "      ]\n"
                "    }\n"
                "  },\n"
                "  \"schema\": \"lume-unlock/shim-bundle/v1\",\n"
                "  \"source_revision\": \"0123456789ab\",\n"
                "  \"version\": \"0.1.0\"\n"
                "}\n");
}

TEST(BundleManifest, ParseOfRenderGivesTheSameManifest) {
  auto parsed = parse_bundle_manifest(render_bundle_manifest(sample()));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed.value(), sample());
  EXPECT_EQ(parsed.value().files().size(), 5u);
}

TEST(BundleManifest, SupportIsOptional) {
  auto parsed = parse_bundle_manifest(
      R"({"schema":"lume-unlock/shim-bundle/v1","version":"1","source_revision":"unknown",
          "platforms":{"darwin-arm64":{"inject_env":"DYLD_INSERT_LIBRARIES",
          "shim":{"path":"darwin-arm64/liblume-unlock-shim.dylib","sha256":")" +
      k_a + R"("},"probe":{"path":"darwin-arm64/lume-unlock-probe","sha256":")" + k_b + R"("}}}})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  const auto& entry = parsed.value().platforms.at("darwin-arm64");
  EXPECT_TRUE(entry.probe.has_value());
  EXPECT_TRUE(entry.support.empty());
}

// bundle.json says which Mach-O slices each darwin file has, so a verdict never promises a slice
// the bundle does not ship (shim/README.md on arm64e).
TEST(BundleManifest, DarwinFilesListTheirSlicesAndTheyAreChecked) {
  BundleManifest with_slices = sample();
  with_slices.platforms["darwin-arm64"].shim.slices = {"arm64"};
  with_slices.platforms["darwin-arm64"].probe->slices = {"x86_64", "arm64"};
  const std::string text = render_bundle_manifest(with_slices);
  EXPECT_NE(text.find("\"slices\": [\n          \"x86_64\",\n          \"arm64\"\n        ]"),
            std::string::npos)
      << text;
  auto parsed = parse_bundle_manifest(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed.value(), with_slices);
  EXPECT_FALSE(parsed.value() == sample()) << "slices are part of the manifest's value";

  auto refused = [&](std::vector<std::string> shim_slices, const std::string& why) {
    BundleManifest bad = sample();
    bad.platforms["darwin-arm64"].shim.slices = std::move(shim_slices);
    auto result = parse_bundle_manifest(render_bundle_manifest(bad));
    ASSERT_FALSE(result.ok()) << why;
    EXPECT_EQ(result.error().category(), ErrorCategory::usage);
    EXPECT_EQ(result.error().why(), why);
  };
  refused({"x86_64"},
          "/platforms/darwin-arm64/shim/slices: the darwin-arm64 file has no arm64 slice");
  refused({"arm64", "arm64"}, "/platforms/darwin-arm64/shim/slices/1: 'arm64' is listed twice");
  refused({"arm 64"},
          "/platforms/darwin-arm64/shim/slices/0: expected a slice name such as 'arm64'");
  std::string empty = render_bundle_manifest(sample());
  empty.replace(empty.find("\"sha256\""), 0, "\"slices\": [], ");
  auto none = parse_bundle_manifest(empty);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().why(),
              testing::EndsWith("/slices: expected a non-empty array of slice names"));
}

// `create` runs the probe to judge the shim: an entry without one is refused when the bundle is
// read, naming the platform, not after a VM was booted.
TEST(BundleManifest, AnEntryWithoutAProbeIsRefusedNamingThePlatform) {
  auto parsed = parse_bundle_manifest(
      R"({"schema":"lume-unlock/shim-bundle/v1","version":"1","source_revision":"unknown",
          "platforms":{"darwin-arm64":{"inject_env":"DYLD_INSERT_LIBRARIES",
          "shim":{"path":"darwin-arm64/liblume-unlock-shim.dylib","sha256":")" +
      k_a + R"("}}}})");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().category(), ErrorCategory::usage);
  EXPECT_EQ(parsed.error().message(),
            "invalid bundle.json: /platforms/darwin-arm64: the platform has no probe (every "
            "platform entry needs a shim and a probe)");
}

std::string manifest_with(const std::string& platform_json) {
  return R"({"schema":"lume-unlock/shim-bundle/v1","version":"0.1.0","source_revision":"x","platforms":{"linux-x86_64":)" +
         platform_json + "}}";
}

/// A manifest whose one platform is `platform_json` (an object) plus a valid probe, so that each
/// case meets the error it is about.
std::string with_platform(const std::string& platform_json) {
  return manifest_with(R"({"probe":{"path":"p","sha256":")" + k_b + R"("},)" +
                       platform_json.substr(1));
}

std::string shim_at(const std::string& path, const std::string& digest = k_a) {
  return R"({"inject_env":"LD_PRELOAD","shim":{"path":")" + path + R"(","sha256":")" + digest +
         R"("}})";
}

TEST(BundleManifest, InvalidManifestsSayWhereAndWhat) {
  struct Case {
    const char* name;
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"not json", "{", "invalid bundle.json: /: not valid JSON: it ends early, after 1 bytes"},
      {"not an object", "[]", "invalid bundle.json: /: expected an object, got an array"},
      {"missing key",
       R"({"schema":"lume-unlock/shim-bundle/v1","version":"1","platforms":{}})",
       "invalid bundle.json: /source_revision: missing (expected a string)"},
      {"unknown key",
       R"({"schema":"lume-unlock/shim-bundle/v1","version":"1","source_revision":"x","platforms":{},"extra":1})",
       "invalid bundle.json: /extra: unknown key"},
      {"other schema",
       R"({"schema":"lume-unlock/shim-bundle/v2","version":"1","source_revision":"x","platforms":{}})",
       "invalid bundle.json: /schema: 'lume-unlock/shim-bundle/v2' is not "
       "'lume-unlock/shim-bundle/v1'"},
      {"version with a slash",
       R"({"schema":"lume-unlock/shim-bundle/v1","version":"1/2","source_revision":"x","platforms":{}})",
       "invalid bundle.json: /version: '1/2' may only hold letters, digits, '.', '_', '+' and '-'"},
      {"number version",
       R"({"schema":"lume-unlock/shim-bundle/v1","version":1,"source_revision":"x","platforms":{}})",
       "invalid bundle.json: /version: expected a string, got an integer"},
      {"no platforms",
       R"({"schema":"lume-unlock/shim-bundle/v1","version":"1","source_revision":"x","platforms":{}})",
       "invalid bundle.json: /platforms: expected an object with at least one platform"},
      {"bad platform name",
       R"({"schema":"lume-unlock/shim-bundle/v1","version":"1","source_revision":"x","platforms":{"Darwin arm64":{}}})",
       "invalid bundle.json: /platforms/Darwin arm64: 'Darwin arm64' is not a platform name like "
       "'darwin-arm64'"},
      {"bad injection variable",
       with_platform(R"({"inject_env":"DYLD_LIBRARY_PATH","shim":{"path":"a","sha256":")" + k_a +
                     R"("}})"),
       "invalid bundle.json: /platforms/linux-x86_64/inject_env: 'DYLD_LIBRARY_PATH' is neither "
       "'DYLD_INSERT_LIBRARIES' nor 'LD_PRELOAD'"},
      {"missing shim",
       with_platform(R"({"inject_env":"LD_PRELOAD"})"),
       "invalid bundle.json: /platforms/linux-x86_64: the platform has no shim (every platform "
       "entry needs a shim and a probe)"},
      {"absolute path",
       with_platform(shim_at("/usr/lib/evil.so")),
       "invalid bundle.json: /platforms/linux-x86_64/shim/path: '/usr/lib/evil.so' is an absolute "
       "path"},
      {"parent path",
       with_platform(shim_at("../evil.so")),
       "invalid bundle.json: /platforms/linux-x86_64/shim/path: '../evil.so' contains a '..' "
       "component"},
      {"non-canonical path",
       with_platform(shim_at("./linux-x86_64//shim.so")),
       "invalid bundle.json: /platforms/linux-x86_64/shim/path: './linux-x86_64//shim.so' is not "
       "written canonically "
       "(expected 'linux-x86_64/shim.so')"},
      {"upper-case digest",
       with_platform(shim_at("a.so", std::string(64, 'A'))),
       "invalid bundle.json: /platforms/linux-x86_64/shim/sha256: '" + std::string(64, 'A') +
           "' is not 64 lower-case hex characters"},
      {"short digest",
       with_platform(shim_at("a.so", "abc")),
       "invalid bundle.json: /platforms/linux-x86_64/shim/sha256: 'abc' is not 64 lower-case hex "
       "characters"},
      {"support not a list",
       with_platform(R"({"inject_env":"LD_PRELOAD","shim":{"path":"a","sha256":")" + k_a +
                     R"("},"support":{}})"),
       "invalid bundle.json: /platforms/linux-x86_64/support: expected an array, got an object"},
      {"support entry without digest",
       with_platform(R"({"inject_env":"LD_PRELOAD","shim":{"path":"a","sha256":")" + k_a +
                     R"("},"support":[{"path":"b"}]})"),
       "invalid bundle.json: /platforms/linux-x86_64/support/0/sha256: missing (expected a "
       "string)"},
      {"unknown file key",
       with_platform(R"({"inject_env":"LD_PRELOAD","shim":{"path":"a","sha256":")" + k_a +
                     R"(","size":1}})"),
       "invalid bundle.json: /platforms/linux-x86_64/shim/size: unknown key"},
  };
  for (const auto& c : cases) {
    auto parsed = parse_bundle_manifest(c.text);
    ASSERT_FALSE(parsed.ok()) << c.name;
    EXPECT_EQ(parsed.error().message(), c.message) << c.name;
    EXPECT_EQ(parsed.error().category(), ErrorCategory::usage) << c.name;
  }
}

TEST(BundleManifest, PlatformNames) {
  for (const char* good : {"darwin-arm64", "darwin-arm64e", "linux-x86_64", "linux-arm64"}) {
    EXPECT_TRUE(is_platform_name(good)) << good;
  }
  for (const char* bad : {"",
                          "darwin",
                          "-arm64",
                          "darwin-",
                          "Darwin-arm64",
                          "darwin-arm-64",
                          "darwin_x-arm64",
                          "linux-x86 64"}) {
    EXPECT_FALSE(is_platform_name(bad)) << bad;
  }
}

TEST(BundleManifest, Versions) {
  for (const char* good : {"0.1.0", "1.0.0-rc.1", "2026.12.02+g1234", "v1"}) {
    EXPECT_TRUE(is_bundle_version(good)) << good;
  }
  for (const char* bad : {"", "-1", ".1", "1/2", "1 2", "1:2"}) {
    EXPECT_FALSE(is_bundle_version(bad)) << bad;
  }
}

} // namespace
} // namespace lume_unlock::bundle

#include "bundle/bundle.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

namespace lume_unlock::bundle {
namespace {

namespace fs = std::filesystem;

class BundleBuilderTest : public ::testing::Test {
protected:
  void SetUp() override {
    m_dir = test::fresh_test_dir("bundle_builder");
    fs::create_directories(m_dir / "src");
    m_shim = dummy("liblume_unlock_shim.so", "shim bytes", 0755);
    m_probe = dummy("lume_unlock_probe", "probe bytes", 0755);
    m_emu = dummy("libMetalEmu.so", "emu bytes", 0755);
    m_dylib = dummy("liblume-unlock-shim.dylib", "mach-o bytes", 0644);
    m_darwin_probe = dummy("darwin-probe", "darwin probe bytes", 0755);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  std::string dummy(const std::string& name, const std::string& content, mode_t mode) {
    auto path = (m_dir / "src" / name).string();
    EXPECT_TRUE(util::write_file_atomic(path, content, mode).ok());
    return path;
  }

  BundleSpec spec() const {
    return BundleSpec{"0.1.0",
                      "abc123",
                      {{"linux-x86_64", "LD_PRELOAD", m_shim, m_probe, {m_emu}},
                       {"darwin-arm64", "DYLD_INSERT_LIBRARIES", m_dylib, m_darwin_probe, {}}}};
  }

  fs::path m_dir;
  std::string m_shim, m_probe, m_emu, m_dylib, m_darwin_probe;
};

TEST_F(BundleBuilderTest, WritesTheDesignLayoutAndManifest) {
  auto built = build_bundle(spec(), (m_dir / "out").string());
  ASSERT_TRUE(built.ok()) << built.error().message();
  const fs::path root = m_dir / "out" / "shim-bundle";
  EXPECT_EQ(built.value().directory, root.string());
  EXPECT_EQ(built.value().archive,
            (m_dir / "out" / "lume-unlock-shim-bundle-0.1.0.tar.gz").string());
  EXPECT_EQ(util::read_file((root / "linux-x86_64/liblume-unlock-shim.so").string()).value(),
            "shim bytes");
  EXPECT_EQ(util::read_file((root / "linux-x86_64/lume-unlock-probe").string()).value(),
            "probe bytes");
  EXPECT_EQ(util::read_file((root / "linux-x86_64/libMetalEmu.so").string()).value(), "emu bytes");
  EXPECT_EQ(util::read_file((root / "darwin-arm64/liblume-unlock-shim.dylib").string()).value(),
            "mach-o bytes");
  EXPECT_EQ(fs::status(root / "linux-x86_64/lume-unlock-probe").permissions() & fs::perms::all,
            fs::perms(0755));
  EXPECT_EQ(fs::status(root / "darwin-arm64/liblume-unlock-shim.dylib").permissions() &
                fs::perms::all,
            fs::perms(0644));

  auto manifest = parse_bundle_manifest(util::read_file((root / "bundle.json").string()).value());
  ASSERT_TRUE(manifest.ok()) << manifest.error().message();
  EXPECT_EQ(manifest.value(), built.value().manifest);
  const auto& linux_entry = manifest.value().platforms.at("linux-x86_64");
  EXPECT_EQ(linux_entry.inject_env, "LD_PRELOAD");
  EXPECT_EQ(linux_entry.shim,
            (BundleFile{"linux-x86_64/liblume-unlock-shim.so", util::sha256_hex("shim bytes")}));
  EXPECT_EQ(linux_entry.probe,
            (BundleFile{"linux-x86_64/lume-unlock-probe", util::sha256_hex("probe bytes")}));
  EXPECT_EQ(
      linux_entry.support,
      (std::vector<BundleFile>{{"linux-x86_64/libMetalEmu.so", util::sha256_hex("emu bytes")}}));
  const auto& darwin = manifest.value().platforms.at("darwin-arm64");
  EXPECT_EQ(darwin.inject_env, "DYLD_INSERT_LIBRARIES");
  EXPECT_EQ(darwin.probe,
            (BundleFile{"darwin-arm64/lume-unlock-probe", util::sha256_hex("darwin probe bytes")}));
  EXPECT_EQ(manifest.value().source_revision, "abc123");
  // Nothing else beside the two results.
  EXPECT_EQ(std::distance(fs::directory_iterator(m_dir / "out"), fs::directory_iterator()), 2);
}

TEST_F(BundleBuilderTest, SameSourcesGiveTheSameArchiveBytes) {
  auto first = build_bundle(spec(), (m_dir / "one").string());
  ASSERT_TRUE(first.ok());
  // Touch the sources: new mtimes must not change the archive.
  fs::last_write_time(m_shim, fs::file_time_type::clock::now() + std::chrono::hours(1));
  auto second = build_bundle(spec(), (m_dir / "two").string());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(util::read_file(first.value().archive).value(),
            util::read_file(second.value().archive).value());
  ASSERT_TRUE(util::write_file_atomic(m_shim, "other shim bytes", 0755).ok());
  auto third = build_bundle(spec(), (m_dir / "three").string());
  ASSERT_TRUE(third.ok());
  EXPECT_NE(util::read_file(first.value().archive).value(),
            util::read_file(third.value().archive).value());
}

TEST_F(BundleBuilderTest, ArchiveLoadsBackAsTheSameBundle) {
  auto built = build_bundle(spec(), (m_dir / "out").string());
  ASSERT_TRUE(built.ok());
  auto loaded = load_bundle_archive(built.value().archive, m_dir.string());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  EXPECT_EQ(loaded.value().manifest(), built.value().manifest);
  auto from_directory = load_bundle_directory(built.value().directory);
  ASSERT_TRUE(from_directory.ok()) << from_directory.error().message();
}

TEST_F(BundleBuilderTest, RebuildReplacesTheOldBundle) {
  auto out = (m_dir / "out").string();
  ASSERT_TRUE(build_bundle(spec(), out).ok());
  auto smaller = spec();
  smaller.platforms.pop_back();
  ASSERT_TRUE(build_bundle(smaller, out).ok());
  EXPECT_FALSE(fs::exists(m_dir / "out" / "shim-bundle" / "darwin-arm64"));
  EXPECT_EQ(std::distance(fs::directory_iterator(m_dir / "out"), fs::directory_iterator()), 2);
}

TEST_F(BundleBuilderTest, BadSpecsAreRefusedAndLeaveNothing) {
  struct Case {
    const char* name;
    BundleSpec spec;
    std::string message;
  };
  auto with = [this](auto change) {
    auto s = spec();
    change(s);
    return s;
  };
  const Case cases[] = {
      {"bad version",
       with([](BundleSpec& s) { s.version = "../1"; }),
       "cannot build the shim bundle: version '../1' may only hold letters, digits, '.', '_', '+' "
       "and '-'"},
      {"no platform",
       with([](BundleSpec& s) { s.platforms.clear(); }),
       "cannot build the shim bundle: no platform given"},
      {"bad platform name",
       with([](BundleSpec& s) { s.platforms[0].name = "linux"; }),
       "cannot build the shim bundle: 'linux' is not a platform name like 'darwin-arm64'"},
      {"platform twice",
       with([](BundleSpec& s) { s.platforms[1].name = "linux-x86_64"; }),
       "cannot build the shim bundle: platform 'linux-x86_64' is given twice"},
      {"bad injection variable",
       with([](BundleSpec& s) { s.platforms[0].inject_env = "LD_LIBRARY_PATH"; }),
       "cannot build the shim bundle: platform 'linux-x86_64': injection variable "
       "'LD_LIBRARY_PATH' is neither "
       "'DYLD_INSERT_LIBRARIES' nor 'LD_PRELOAD'"},
      {"no shim",
       with([](BundleSpec& s) { s.platforms[1].shim.clear(); }),
       "cannot build the shim bundle: platform 'darwin-arm64' has no shim"},
      {"no probe",
       with([](BundleSpec& s) { s.platforms[1].probe.reset(); }),
       "cannot build the shim bundle: platform 'darwin-arm64' has no probe (every platform entry "
       "needs a shim and a probe)"},
      {"two files, one name",
       with([this](BundleSpec& s) { s.platforms[0].support.push_back(m_emu); }),
       "cannot build the shim bundle: platform 'linux-x86_64' has two files named "
       "'libMetalEmu.so'"},
      {"missing source",
       with([](BundleSpec& s) { s.platforms[0].probe = "/nonexistent/probe"; }),
       "cannot build the shim bundle: cannot read '/nonexistent/probe': No such file or directory"},
  };
  for (const auto& c : cases) {
    auto out = m_dir / "out";
    fs::remove_all(out);
    auto built = build_bundle(c.spec, out.string());
    ASSERT_FALSE(built.ok()) << c.name;
    EXPECT_EQ(built.error().message(), c.message) << c.name;
    EXPECT_TRUE(!fs::exists(out) || fs::is_empty(out)) << c.name;
  }
}

} // namespace
} // namespace lume_unlock::bundle

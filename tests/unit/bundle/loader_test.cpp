#include "bundle/bundle.hpp"
#include "support/temp_dir.hpp"
#include "util/archive.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace lume_unlock::bundle {
namespace {

namespace fs = std::filesystem;

class BundleLoaderTest : public ::testing::Test {
protected:
  void SetUp() override {
    m_dir = test::fresh_test_dir("bundle_loader");
    fs::create_directories(m_dir / "bundle" / "linux-x86_64");
    fs::create_directories(m_dir / "work");
    m_manifest.version = "0.1.0";
    m_manifest.source_revision = "abc";
    m_manifest.platforms["linux-x86_64"] =
        PlatformEntry{"LD_PRELOAD",
                      {"linux-x86_64/liblume-unlock-shim.so", util::sha256_hex("shim")},
                      BundleFile{"linux-x86_64/lume-unlock-probe", util::sha256_hex("probe")},
                      {{"linux-x86_64/libMetalEmu.so", util::sha256_hex("emu")}}};
    write("linux-x86_64/liblume-unlock-shim.so", "shim");
    write("linux-x86_64/lume-unlock-probe", "probe");
    write("linux-x86_64/libMetalEmu.so", "emu");
    write("bundle.json", render_bundle_manifest(m_manifest));
  }
  void TearDown() override { fs::remove_all(m_dir); }

  void write(const std::string& relative, const std::string& content) {
    ASSERT_TRUE(util::write_file_atomic((m_dir / "bundle" / relative).string(), content).ok());
  }
  std::string root() const { return (m_dir / "bundle").string(); }

  /// The bundle directory as an archive, optionally with extra entries.
  std::string archive(std::vector<util::TarEntry> extra = {}) {
    std::vector<util::TarEntry> entries = std::move(extra);
    for (const auto& item : fs::recursive_directory_iterator(m_dir / "bundle")) {
      if (item.is_regular_file()) {
        entries.push_back(util::TarEntry::file(
            item.path().lexically_relative(m_dir / "bundle").string(), item.path().string()));
      }
    }
    auto path = (m_dir / "bundle.tar.gz").string();
    EXPECT_TRUE(util::write_tar_gz_file(path, std::move(entries)).ok());
    return path;
  }

  fs::path m_dir;
  BundleManifest m_manifest;
};

TEST_F(BundleLoaderTest, LoadsAVerifiedDirectory) {
  auto loaded = load_bundle_directory(root());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  EXPECT_EQ(loaded.value().manifest(), m_manifest);
  EXPECT_EQ(loaded.value().local_path(m_manifest.platforms.at("linux-x86_64").shim),
            root() + "/linux-x86_64/liblume-unlock-shim.so");
}

TEST_F(BundleLoaderTest, ChangedFileIsNamedWithBothDigests) {
  write("linux-x86_64/libMetalEmu.so", "tampered");
  auto loaded = load_bundle_directory(root());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message(),
            "cannot load shim bundle '" + root() +
                "': bundle file 'linux-x86_64/libMetalEmu.so' does not match bundle.json: "
                "expected sha256 " +
                util::sha256_hex("emu") + ", found " + util::sha256_hex("tampered"));
  EXPECT_EQ(loaded.error().category(), ErrorCategory::verification);
}

TEST_F(BundleLoaderTest, MissingFileIsNamed) {
  fs::remove(m_dir / "bundle" / "linux-x86_64" / "lume-unlock-probe");
  auto loaded = load_bundle_directory(root());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message(),
            "cannot load shim bundle '" + root() +
                "': bundle file 'linux-x86_64/lume-unlock-probe' is missing: No such file "
                "or directory");
}

TEST_F(BundleLoaderTest, SymlinkInPlaceOfAFileIsRefused) {
  fs::remove(m_dir / "bundle" / "linux-x86_64" / "lume-unlock-probe");
  fs::create_symlink("libMetalEmu.so", m_dir / "bundle" / "linux-x86_64" / "lume-unlock-probe");
  auto loaded = load_bundle_directory(root());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message(),
            "cannot load shim bundle '" + root() +
                "': bundle file 'linux-x86_64/lume-unlock-probe' is not a regular file");
}

TEST_F(BundleLoaderTest, DirectoryWithoutManifestIsBadInput) {
  fs::remove(m_dir / "bundle" / "bundle.json");
  auto loaded = load_bundle_directory(root());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message(),
            "cannot load shim bundle '" + root() + "': cannot read '" + root() +
                "/bundle.json': No such file or directory");
  EXPECT_EQ(loaded.error().category(), ErrorCategory::usage);
}

TEST_F(BundleLoaderTest, InvalidManifestKeepsItsMessage) {
  write("bundle.json", R"({"schema":"other"})");
  auto loaded = load_bundle_directory(root());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message(),
            "cannot load shim bundle '" + root() +
                "': invalid bundle.json: /schema: 'other' is not 'lume-unlock/shim-bundle/v1'");
}

TEST_F(BundleLoaderTest, LoadsFromAnArchiveAndCleansUpAfterwards) {
  auto path = archive();
  std::string extracted_root;
  {
    auto loaded = load_bundle_archive(path, (m_dir / "work").string());
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    EXPECT_EQ(loaded.value().manifest(), m_manifest);
    extracted_root = loaded.value().root();
    EXPECT_EQ(
        util::read_file(loaded.value().local_path(m_manifest.platforms.at("linux-x86_64").shim))
            .value(),
        "shim");
    auto copy = loaded.value(); // copies share the extracted directory
    (void)copy;
  }
  EXPECT_FALSE(fs::exists(extracted_root));
  EXPECT_TRUE(fs::is_empty(m_dir / "work"));
}

TEST_F(BundleLoaderTest, TamperedArchiveNamesTheArchive) {
  write("linux-x86_64/lume-unlock-probe", "other probe");
  auto path = archive();
  auto loaded = load_bundle_archive(path, (m_dir / "work").string());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message(),
            "cannot load shim bundle '" + path +
                "': bundle file 'linux-x86_64/lume-unlock-probe' does not match "
                "bundle.json: expected sha256 " +
                util::sha256_hex("probe") + ", found " + util::sha256_hex("other probe"));
  EXPECT_TRUE(fs::is_empty(m_dir / "work"));
}

TEST_F(BundleLoaderTest, ArchivesGoThroughSafeExtraction) {
  util::ExtractLimits tiny;
  tiny.max_entry_bytes = 3; // "shim", "probe" and the manifest are longer
  auto path = archive();
  auto loaded = load_bundle_archive(path, (m_dir / "work").string(), tiny);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message(),
            "cannot extract '" + path +
                "': entry 'bundle.json' is larger than the limit of 3 bytes per entry");
  EXPECT_TRUE(fs::is_empty(m_dir / "work"));
}

} // namespace
} // namespace lume_unlock::bundle

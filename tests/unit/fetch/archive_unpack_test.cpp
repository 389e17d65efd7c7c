#include "fetch/fetch.hpp"
#include "support/temp_dir.hpp"
#include "support/zip_writer.hpp"
#include "util/archive.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

namespace lume_unlock::fetch {
namespace {

namespace fs = std::filesystem;
using test::make_zip;
using test::ZipEntry;

/// Everything under `root`, relative, so a test can say "nothing else was written".
std::vector<std::string> tree(const fs::path& root) {
  std::vector<std::string> names;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    names.push_back(it->path().lexically_relative(root).generic_string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class ArchiveUnpackTest : public ::testing::Test {
protected:
  void SetUp() override {
    m_dir = test::fresh_test_dir("archive_unpack");
    fs::create_directories(m_dir / "work");
    m_staging = (m_dir / "work" / "staging").string();
  }
  void TearDown() override { fs::remove_all(m_dir); }

  std::string blob(const std::string& name, const std::string& bytes) {
    const auto path = (m_dir / name).string();
    EXPECT_TRUE(util::write_file_atomic(path, bytes).ok());
    return path;
  }

  /// After a refusal: no staging directory, nothing beside it, nothing outside the test dir's
  /// own files (no "evil" or "etc" anywhere).
  void expect_nothing_written() const {
    EXPECT_TRUE(fs::is_empty(m_dir / "work")) << tree(m_dir / "work").front();
    EXPECT_FALSE(fs::exists(m_dir / "evil"));
    EXPECT_FALSE(fs::exists(m_dir / "escaped"));
  }

  fs::path m_dir;
  std::string m_staging;
};

TEST_F(ArchiveUnpackTest, ZipWithItsTopFolderStrippedListsEveryFile) {
  // One top folder holding a program, a library, a link to it and a file beside them.
  const auto path = blob("llama.zip",
                         make_zip({ZipEntry::directory("build/"),
                                   ZipEntry::directory("build/bin/"),
                                   ZipEntry::file("build/bin/llama-server", "server", 0755),
                                   ZipEntry::file("build/bin/libggml.dylib", "lib"),
                                   ZipEntry::symlink("build/bin/libggml.0.dylib", "libggml.dylib"),
                                   ZipEntry::file("build/LICENSE", "MIT")}));
  auto files = unpack_artifact(path, UnpackFormat::zip, 1, m_staging);
  ASSERT_TRUE(files.ok()) << files.error().message();
  ASSERT_EQ(files.value().size(), 4u);
  const auto& list = files.value();
  EXPECT_EQ(list[0].relative_path, "LICENSE");
  EXPECT_EQ(list[1].relative_path, "bin/libggml.0.dylib");
  EXPECT_EQ(list[1].symlink_target, "libggml.dylib");
  EXPECT_EQ(list[1].sha256, "");
  EXPECT_EQ(list[2].relative_path, "bin/libggml.dylib");
  EXPECT_FALSE(list[2].executable);
  EXPECT_EQ(list[3].relative_path, "bin/llama-server");
  EXPECT_EQ(list[3].host_path, m_staging + "/bin/llama-server");
  EXPECT_EQ(list[3].sha256, util::sha256_hex("server"));
  EXPECT_EQ(list[3].size, 6u);
  EXPECT_TRUE(list[3].executable);
  EXPECT_EQ(util::read_file(m_staging + "/bin/llama-server").value(), "server");
  EXPECT_EQ(fs::status(m_staging + "/bin/llama-server").permissions() & fs::perms::all,
            fs::perms(0755));
}

TEST_F(ArchiveUnpackTest, StoredZipEntriesAreReadToo) {
  ZipEntry stored = ZipEntry::file("a.txt", "plain");
  stored.deflate = false;
  auto files = unpack_artifact(blob("s.zip", make_zip({stored})), UnpackFormat::zip, 0, m_staging);
  ASSERT_TRUE(files.ok()) << files.error().message();
  ASSERT_EQ(files.value().size(), 1u);
  EXPECT_EQ(files.value()[0].relative_path, "a.txt");
  EXPECT_EQ(files.value()[0].sha256, util::sha256_hex("plain"));
}

TEST_F(ArchiveUnpackTest, TarGzWithTwoComponentsStripped) {
  auto bytes = util::tar_gz_bytes({util::TarEntry::bytes("pkg/v1/bin/tool", "t", 0755),
                                   util::TarEntry::bytes("pkg/v1/share/doc", "d")});
  ASSERT_TRUE(bytes.ok());
  auto files = unpack_artifact(blob("t.tar.gz", bytes.value()), UnpackFormat::tar_gz, 2, m_staging);
  ASSERT_TRUE(files.ok()) << files.error().message();
  ASSERT_EQ(files.value().size(), 2u);
  EXPECT_EQ(files.value()[0].relative_path, "bin/tool");
  EXPECT_TRUE(files.value()[0].executable);
  EXPECT_EQ(files.value()[1].relative_path, "share/doc");
  EXPECT_EQ(tree(m_staging), (std::vector<std::string>{"bin", "bin/tool", "share", "share/doc"}));
}

TEST_F(ArchiveUnpackTest, AFileWithNoPathLeftAfterStrippingIsRefused) {
  const auto path =
      blob("top.zip", make_zip({ZipEntry::file("README", "r"), ZipEntry::file("d/x", "x")}));
  auto files = unpack_artifact(path, UnpackFormat::zip, 1, m_staging);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.error().message(),
            "cannot extract '" + path +
                "': entry 'README' has no path left after stripping 1 leading path component");
  EXPECT_EQ(files.error().category(), ErrorCategory::verification);
  expect_nothing_written();
}

TEST_F(ArchiveUnpackTest, HostileZipArchivesAreRefusedAndWriteNothing) {
  util::ExtractLimits small;
  small.max_entry_bytes = 64 * 1024;
  small.max_total_bytes = 128 * 1024;
  ZipEntry bomb = ZipEntry::file("model.bin", std::string(4 << 20, '\0'));
  bomb.declared_size = 1000; // the headers lie; the written bytes tell
  struct Case {
    const char* name;
    std::vector<ZipEntry> entries;
    std::string why;
  };
  const Case cases[] = {
      {"parent component",
       {ZipEntry::file("top/../../evil", "x")},
       "entry 'top/../../evil' contains a '..' component"},
      {"absolute path",
       {ZipEntry::file("/tmp/evil", "x")},
       "entry '/tmp/evil' is an absolute path"},
      {"symlink out of the destination",
       {ZipEntry::symlink("top/escaped", "../../..")},
       "symbolic link 'top/escaped' -> '../../..' leaves the destination"},
      {"write through a symlink",
       {ZipEntry::symlink("top/l", "."), ZipEntry::file("top/l/f", "x")},
       "entry 'top/l/f' goes through the symbolic link 'l'"},
      {"zip bomb with lying sizes",
       {bomb},
       "entry 'model.bin' is larger than the limit of 65536 "
       "bytes per entry"},
  };
  for (const auto& c : cases) {
    const auto path = blob("hostile.zip", make_zip(c.entries));
    const unsigned strip = std::string(c.name) == "zip bomb with lying sizes" ? 0 : 1;
    auto files = unpack_artifact(path, UnpackFormat::zip, strip, m_staging, small);
    ASSERT_FALSE(files.ok()) << c.name;
    EXPECT_EQ(files.error().message(), "cannot extract '" + path + "': " + c.why) << c.name;
    EXPECT_EQ(files.error().category(), ErrorCategory::verification) << c.name;
    expect_nothing_written();
  }
}

TEST_F(ArchiveUnpackTest, NoneLinksTheSingleFileIntoStagingWithItsMode) {
  const auto path = blob("model.gguf", "GGUF weights");
  chmod(path.c_str(), 0644);
  auto files = unpack_artifact(path, UnpackFormat::none, 0, m_staging);
  ASSERT_TRUE(files.ok()) << files.error().message();
  ASSERT_EQ(files.value().size(), 1u);
  EXPECT_EQ(files.value()[0].relative_path, "");
  EXPECT_EQ(files.value()[0].host_path, m_staging + "/model.gguf");
  EXPECT_EQ(files.value()[0].sha256, util::sha256_hex("GGUF weights"));
  EXPECT_EQ(files.value()[0].size, 12u);
  EXPECT_FALSE(files.value()[0].executable);
  EXPECT_EQ(util::read_file(m_staging + "/model.gguf").value(), "GGUF weights");
}

TEST_F(ArchiveUnpackTest, NoneRefusesStripComponents) {
  auto files = unpack_artifact(blob("m", "x"), UnpackFormat::none, 1, m_staging);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.error().message(),
            "cannot unpack '" + (m_dir / "m").string() +
                "': strip_components applies to archives only, and unpack is none");
  EXPECT_EQ(files.error().category(), ErrorCategory::usage);
  expect_nothing_written();
}

TEST_F(ArchiveUnpackTest, ExistingStagingIsLeftAlone) {
  fs::create_directories(m_staging);
  auto files = unpack_artifact(blob("m", "x"), UnpackFormat::none, 0, m_staging);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.error().message(),
            "cannot unpack '" + (m_dir / "m").string() + "': the staging directory '" + m_staging +
                "' already exists");
  EXPECT_TRUE(fs::is_empty(m_staging));
}

TEST(UnpackFormat, ParsesTheRecipeSpellingsAndSuggestsTheClosest) {
  EXPECT_EQ(parse_unpack_format("zip").value(), UnpackFormat::zip);
  EXPECT_EQ(parse_unpack_format("tar.gz").value(), UnpackFormat::tar_gz);
  EXPECT_EQ(parse_unpack_format("none").value(), UnpackFormat::none);
  EXPECT_STREQ(format_name(UnpackFormat::tar_gz), "tar.gz");
  auto bad = parse_unpack_format("tgz");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "'tgz' is not an unpack format; use zip, tar.gz or none");
  EXPECT_EQ(bad.error().category(), ErrorCategory::usage);
  auto close = parse_unpack_format("tar.gzz");
  ASSERT_FALSE(close.ok());
  EXPECT_EQ(close.error().hint(), "did you mean 'tar.gz'?");
}

} // namespace
} // namespace lume_unlock::fetch

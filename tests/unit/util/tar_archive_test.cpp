#include "support/temp_dir.hpp"
#include "util/archive.hpp"
#include "util/atomic_file.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

namespace lume_unlock::util {
namespace {

namespace fs = std::filesystem;

/// What libarchive reads back from one header.
struct ReadEntry {
  std::string path;
  mode_t type;
  mode_t perm;
  std::int64_t mtime;
  std::int64_t uid;
  std::int64_t gid;
  std::string uname;
  std::string gname;
  std::string content;
};

std::vector<ReadEntry> read_back(const std::string& bytes) {
  std::vector<ReadEntry> entries;
  struct archive* a = archive_read_new();
  archive_read_support_filter_gzip(a);
  archive_read_support_format_tar(a);
  EXPECT_EQ(archive_read_open_memory(a, bytes.data(), bytes.size()), ARCHIVE_OK);
  archive_entry* header = nullptr;
  while (archive_read_next_header(a, &header) == ARCHIVE_OK) {
    ReadEntry e{archive_entry_pathname(header),
                archive_entry_filetype(header),
                archive_entry_perm(header),
                archive_entry_mtime(header),
                archive_entry_uid(header),
                archive_entry_gid(header),
                archive_entry_uname(header) != nullptr ? archive_entry_uname(header) : "",
                archive_entry_gname(header) != nullptr ? archive_entry_gname(header) : "",
                {}};
    char buffer[4096];
    la_ssize_t got = 0;
    while ((got = archive_read_data(a, buffer, sizeof buffer)) > 0) {
      e.content.append(buffer, static_cast<std::size_t>(got));
    }
    entries.push_back(e);
  }
  archive_read_free(a);
  return entries;
}

class TarArchiveTest : public ::testing::Test {
protected:
  void SetUp() override { m_dir = test::fresh_test_dir("tar_archive"); }
  void TearDown() override { fs::remove_all(m_dir); }

  std::string write_source(const std::string& name, const std::string& content, mode_t mode) {
    auto path = (m_dir / name).string();
    EXPECT_TRUE(write_file_atomic(path, content, mode).ok());
    chmod(path.c_str(), mode);
    return path;
  }

  fs::path m_dir;
};

TEST_F(TarArchiveTest, SameEntriesInAnyOrderGiveIdenticalBytes) {
  auto probe = write_source("probe", "#!/bin/sh\necho probe\n", 0700);
  auto first = tar_gz_bytes({TarEntry::bytes("bundle.json", "{}\n"),
                             TarEntry::file("linux-x86_64/lume-unlock-probe", probe),
                             TarEntry::bytes("linux-x86_64/libMetalEmu.so", "emu", 0775)});
  // Different order, different time, different mode bits that normalize to the same modes.
  chmod(probe.c_str(), 0751);
  auto second = tar_gz_bytes({TarEntry::bytes("linux-x86_64/libMetalEmu.so", "emu", 0700),
                              TarEntry::file("linux-x86_64/lume-unlock-probe", probe),
                              TarEntry::bytes("bundle.json", "{}\n", 0600)});
  ASSERT_TRUE(first.ok()) << first.error().message();
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_EQ(first.value(), second.value());
}

TEST_F(TarArchiveTest, GzipHeaderHasNoTimestampAndNoFileName) {
  auto bytes = tar_gz_bytes({TarEntry::bytes("a", "x")}).value();
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  EXPECT_EQ(bytes[3] & 0x08, 0) << "FNAME flag set";
  EXPECT_EQ(bytes.substr(4, 4), std::string(4, '\0')) << "MTIME is not zero";
}

TEST_F(TarArchiveTest, HeadersAreNormalizedAndSortedWithParentDirectories) {
  auto bytes = tar_gz_bytes({TarEntry::bytes("z/top", "t", 0600),
                             TarEntry::bytes("b/c/tool", "run", 0700),
                             TarEntry::directory("a-empty"),
                             TarEntry::bytes("b/data", "d", 0666)});
  ASSERT_TRUE(bytes.ok()) << bytes.error().message();
  auto entries = read_back(bytes.value());
  std::vector<std::string> paths;
  for (const auto& e : entries) {
    paths.push_back(e.path);
    EXPECT_EQ(e.mtime, 0) << e.path;
    EXPECT_EQ(e.uid, 0) << e.path;
    EXPECT_EQ(e.gid, 0) << e.path;
    EXPECT_EQ(e.uname, "") << e.path;
    EXPECT_EQ(e.gname, "") << e.path;
    if (e.type == AE_IFDIR) {
      EXPECT_EQ(e.perm, 0755u) << e.path;
    }
  }
  // Directory names end in a slash, as tar writes them.
  EXPECT_EQ(
      paths,
      (std::vector<std::string>{"a-empty/", "b/", "b/c/", "b/c/tool", "b/data", "z/", "z/top"}));
  EXPECT_EQ(entries[3].perm, 0755u);
  EXPECT_EQ(entries[3].content, "run");
  EXPECT_EQ(entries[4].perm, 0644u);
  EXPECT_EQ(entries[6].perm, 0644u);
  EXPECT_EQ(entries[6].content, "t");
}

TEST_F(TarArchiveTest, FileEntriesStreamTheSourceAndKeepItsExecuteBit) {
  std::string big(200000, 'q');
  big[123456] = 'Z';
  auto tool = write_source("tool", big, 0755);
  auto data = write_source("data", "plain", 0644);
  auto entries = read_back(
      tar_gz_bytes({TarEntry::file("bin/tool", tool), TarEntry::file("data", data)}).value());
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].path, "bin/");
  EXPECT_EQ(entries[1].content, big);
  EXPECT_EQ(entries[1].perm, 0755u);
  EXPECT_EQ(entries[2].content, "plain");
  EXPECT_EQ(entries[2].perm, 0644u);
}

TEST_F(TarArchiveTest, LongPathsSurviveAndStayDeterministic) {
  std::string deep;
  for (int i = 0; i < 30; ++i) {
    deep += "directory" + std::to_string(i) + "/";
  }
  deep += "file";
  auto once = tar_gz_bytes({TarEntry::bytes(deep, "x")}).value();
  auto twice = tar_gz_bytes({TarEntry::bytes(deep, "x")}).value();
  EXPECT_EQ(once, twice);
  EXPECT_EQ(read_back(once).back().path, deep);
}

TEST_F(TarArchiveTest, BadEntriesAreRefusedWithTheirReason) {
  struct Case {
    const char* name;
    std::vector<TarEntry> entries;
    std::string message;
  };
  const Case cases[] = {
      {"absolute",
       {TarEntry::bytes("/etc/passwd", "x")},
       "cannot write archive: entry '/etc/passwd' is an absolute path"},
      {"parent",
       {TarEntry::bytes("a/../../b", "x")},
       "cannot write archive: entry 'a/../../b' contains a '..' component"},
      {"root",
       {TarEntry::bytes("./", "x")},
       "cannot write archive: entry './' names the archive root"},
      {"twice",
       {TarEntry::bytes("a", "1"), TarEntry::bytes("./a", "2")},
       "cannot write archive: entry 'a' is given twice"},
      {"file then child",
       {TarEntry::bytes("a", "1"), TarEntry::bytes("a/b", "2")},
       "cannot write archive: entry 'a' is a file but other entries are inside it"},
      {"child then file",
       {TarEntry::bytes("a/b", "2"), TarEntry::bytes("a", "1")},
       "cannot write archive: entry 'a' is a file but other entries are inside it"},
      {"missing source",
       {TarEntry::file("a", "/nonexistent/lume-unlock-source")},
       "cannot write archive: cannot read '/nonexistent/lume-unlock-source': No such file or "
       "directory"},
  };
  for (const auto& c : cases) {
    auto result = tar_gz_bytes(c.entries);
    ASSERT_FALSE(result.ok()) << c.name;
    EXPECT_EQ(result.error().message(), c.message) << c.name;
  }
}

TEST_F(TarArchiveTest, ExplicitDirectoryBesideItsChildrenIsOneEntry) {
  auto entries =
      read_back(tar_gz_bytes({TarEntry::bytes("d/f", "x"), TarEntry::directory("d")}).value());
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].path, "d/");
}

TEST_F(TarArchiveTest, FileOutputMatchesMemoryOutputAndLeavesNoTemporary) {
  auto path = (m_dir / "out.tar.gz").string();
  ASSERT_TRUE(write_tar_gz_file(path, {TarEntry::bytes("a", "x")}).ok());
  EXPECT_EQ(read_file(path).value(), tar_gz_bytes({TarEntry::bytes("a", "x")}).value());
  EXPECT_EQ(std::distance(fs::directory_iterator(m_dir), fs::directory_iterator()), 1);
}

TEST_F(TarArchiveTest, FailedFileOutputLeavesNothing) {
  auto path = (m_dir / "out.tar.gz").string();
  auto status =
      write_tar_gz_file(path, {TarEntry::bytes("a", "x"), TarEntry::file("b", "/nonexistent/src")});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            "cannot write archive '" + path +
                "': cannot read '/nonexistent/src': No such file or directory");
  EXPECT_TRUE(fs::is_empty(m_dir));
}

} // namespace
} // namespace lume_unlock::util

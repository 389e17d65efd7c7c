#include "support/temp_dir.hpp"
#include "support/zip_writer.hpp"
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

/// One header of a hand-made archive: anything libarchive can write, safe or not.
struct Raw {
  std::string path;
  mode_t type = AE_IFREG;
  std::string content;
  std::string symlink;  ///< target of a symbolic link
  std::string hardlink; ///< target of a hard link
  mode_t perm = 0644;
  std::int64_t declared_size = -1; ///< header size when not the content's
};

Raw file(std::string path, std::string content = "x", mode_t perm = 0644) {
  return Raw{std::move(path), AE_IFREG, std::move(content), {}, {}, perm, -1};
}
Raw dir(std::string path) {
  return Raw{std::move(path), AE_IFDIR, {}, {}, {}, 0755, -1};
}
Raw symlink_to(std::string path, std::string target) {
  return Raw{std::move(path), AE_IFLNK, {}, std::move(target), {}, 0777, -1};
}
Raw hardlink_to(std::string path, std::string target) {
  return Raw{std::move(path), AE_IFREG, {}, {}, std::move(target), 0644, -1};
}
Raw special(std::string path, mode_t type) {
  return Raw{std::move(path), type, {}, {}, {}, 0644, -1};
}

/// Writes `entries` as an uncompressed pax tar, exactly as given (no checks, no sorting).
std::string craft(const std::vector<Raw>& entries) {
  std::string bytes(1 << 20, '\0');
  size_t used = 0;
  struct archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  EXPECT_EQ(archive_write_open_memory(a, bytes.data(), bytes.size(), &used), ARCHIVE_OK);
  for (const auto& raw : entries) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, raw.path.c_str());
    archive_entry_set_filetype(e, raw.type);
    archive_entry_set_perm(e, raw.perm);
    if (!raw.symlink.empty()) {
      archive_entry_set_symlink(e, raw.symlink.c_str());
    }
    if (!raw.hardlink.empty()) {
      archive_entry_set_hardlink(e, raw.hardlink.c_str());
    }
    archive_entry_set_size(e,
                           raw.declared_size >= 0 ? raw.declared_size
                                                  : static_cast<std::int64_t>(raw.content.size()));
    EXPECT_EQ(archive_write_header(a, e), ARCHIVE_OK) << raw.path;
    if (!raw.content.empty()) {
      archive_write_data(a, raw.content.data(), raw.content.size());
    }
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  bytes.resize(used);
  return bytes;
}

class SafeExtractTest : public ::testing::Test {
protected:
  void SetUp() override {
    m_dir = test::fresh_test_dir("safe_extract");
    fs::create_directories(m_dir / "work");
    m_archive = (m_dir / "input.tar").string();
    m_destination = (m_dir / "work" / "out").string();
  }
  void TearDown() override { fs::remove_all(m_dir); }

  Status extract(const std::string& bytes,
                 const ExtractLimits& limits = {},
                 const ExtractOptions& options = {}) {
    EXPECT_TRUE(write_file_atomic(m_archive, bytes).ok());
    return safe_extract(m_archive, m_destination, limits, options);
  }

  Status extract_zip(const std::vector<test::ZipEntry>& entries,
                     unsigned strip_components = 0,
                     const ExtractLimits& limits = {}) {
    ExtractOptions options;
    options.format = ArchiveFormat::zip;
    options.strip_components = strip_components;
    return extract(test::make_zip(entries), limits, options);
  }

  /// After a failure nothing is left: no destination, no temporary directory beside it.
  void expect_nothing_left() const {
    EXPECT_FALSE(fs::exists(fs::symlink_status(m_destination)));
    EXPECT_TRUE(fs::is_empty(m_dir / "work"));
  }

  fs::path m_dir;
  std::string m_archive;
  std::string m_destination;
};

TEST_F(SafeExtractTest, ExtractsFilesDirectoriesAndLinksThatStayInside) {
  auto status = extract(craft({dir("./"),
                               dir("bin"),
                               file("bin/tool", "run me", 0755),
                               file("lib/libx.so.1", "elf"),
                               symlink_to("lib/libx.so", "libx.so.1"),
                               symlink_to("bin/lib", "../lib"),
                               hardlink_to("bin/tool2", "bin/tool"),
                               file("data", "d", 04777)}));
  ASSERT_TRUE(status.ok()) << status.error().message();
  fs::path out = m_destination;
  EXPECT_EQ(read_file((out / "bin/tool").string()).value(), "run me");
  EXPECT_EQ(read_file((out / "lib/libx.so").string()).value(), "elf");
  EXPECT_EQ(read_file((out / "bin/lib/libx.so.1").string()).value(), "elf");
  EXPECT_EQ(read_file((out / "bin/tool2").string()).value(), "run me");
  EXPECT_EQ(fs::status(out / "bin/tool").permissions() & fs::perms::all, fs::perms(0755));
  // setuid and write-for-others are dropped.
  EXPECT_EQ(fs::status(out / "data").permissions() & (fs::perms::all | fs::perms::set_uid),
            fs::perms(0755));
  EXPECT_EQ(fs::status(out).permissions() & fs::perms::all, fs::perms(0755));
  EXPECT_EQ(std::distance(fs::directory_iterator(m_dir / "work"), fs::directory_iterator()), 1);
}

TEST_F(SafeExtractTest, ReadsTheDeterministicGzipArchives) {
  auto bytes =
      tar_gz_bytes({TarEntry::bytes("bundle.json", "{}"), TarEntry::bytes("a/b", "c", 0755)});
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(extract(bytes.value()).ok());
  EXPECT_EQ(read_file(m_destination + "/a/b").value(), "c");
  EXPECT_EQ(read_file(m_destination + "/bundle.json").value(), "{}");
}

struct RejectCase {
  const char* name;
  std::vector<Raw> entries;
  std::string why;
  ExtractLimits limits;
};

TEST_F(SafeExtractTest, EveryUnsafeArchiveIsRejectedWithItsOwnMessage) {
  ExtractLimits small;
  small.max_entry_bytes = 10;
  small.max_total_bytes = 15;
  small.max_entries = 3;
  const RejectCase cases[] = {
      {"absolute path",
       {file("ok"), file("/etc/passwd")},
       "entry '/etc/passwd' is an absolute path",
       {}},
      {"parent component",
       {file("a/../../escape")},
       "entry 'a/../../escape' contains a '..' component",
       {}},
      {"symlink up and out",
       {symlink_to("evil", "../outside")},
       "symbolic link 'evil' -> '../outside' leaves the destination",
       {}},
      {"absolute symlink",
       {symlink_to("etc", "/etc")},
       "symbolic link 'etc' -> '/etc' leaves the destination",
       {}},
      {"symlink through another symlink",
       {dir("sub"), symlink_to("sub/up", ".."), symlink_to("l2", "sub/up/..")},
       "symbolic link 'l2' -> 'sub/up/..' leaves the destination",
       {}},
      {"symlink chain built in the wrong order",
       {symlink_to("l2", "sub/up/.."), dir("sub"), symlink_to("sub/up", "..")},
       "symbolic link 'l2' -> 'sub/up/..' leaves the destination",
       {}},
      {"hard link outside",
       {hardlink_to("h", "../../etc/passwd")},
       "hard link 'h' -> '../../etc/passwd' leaves the destination",
       {}},
      {"absolute hard link",
       {hardlink_to("h", "/etc/passwd")},
       "hard link 'h' -> '/etc/passwd' leaves the destination",
       {}},
      {"hard link to nothing yet",
       {hardlink_to("h", "later"), file("later")},
       "hard link 'h' -> 'later' names no file extracted before it",
       {}},
      {"hard link through a symlink",
       {dir("d"), file("d/f"), symlink_to("l", "d"), hardlink_to("h", "l/f")},
       "hard link 'h' -> 'l/f' names no file extracted before it",
       {}},
      {"write through a symlink",
       {dir("d"), symlink_to("l", "d"), file("l/f")},
       "entry 'l/f' goes through the symbolic link 'l'",
       {}},
      {"file used as a directory",
       {file("a"), file("a/b")},
       "entry 'a/b' is inside 'a', which is not a directory",
       {}},
      {"same file twice", {file("a", "1"), file("./a", "2")}, "entry './a' appears twice", {}},
      {"character device",
       {special("dev/null", AE_IFCHR)},
       "entry 'dev/null' is a character device; only files, directories and links are allowed",
       {}},
      {"block device",
       {special("sda", AE_IFBLK)},
       "entry 'sda' is a block device; only files, directories and links are allowed",
       {}},
      {"fifo",
       {special("pipe", AE_IFIFO)},
       "entry 'pipe' is a FIFO; only files, directories and links are allowed",
       {}},
      {"entry over the bound",
       {file("big", std::string(11, 'b'))},
       "entry 'big' is larger than the limit of 10 bytes per entry",
       small},
      {"total over the bound",
       {file("a", std::string(8, 'a')), file("b", std::string(8, 'b'))},
       "the entries total more than the limit of 15 bytes",
       small},
      {"too many entries",
       {file("a"), file("b"), file("c"), file("d")},
       "the archive has more than the limit of 3 entries",
       small},
  };
  for (const auto& c : cases) {
    fs::remove_all(m_destination);
    auto status = extract(craft(c.entries), c.limits);
    ASSERT_FALSE(status.ok()) << c.name;
    EXPECT_EQ(status.error().message(), "cannot extract '" + m_archive + "': " + c.why) << c.name;
    EXPECT_EQ(status.error().category(), ErrorCategory::verification) << c.name;
    expect_nothing_left();
  }
}

TEST_F(SafeExtractTest, DeclaredSizeOverTheBoundIsRejectedBeforeReading) {
  ExtractLimits small;
  small.max_entry_bytes = 4;
  Raw lying = file("big", "12345678");
  auto status = extract(craft({lying}), small);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            "cannot extract '" + m_archive +
                "': entry 'big' is larger than the limit of 4 bytes per entry");
  expect_nothing_left();
}

TEST_F(SafeExtractTest, ExistingDestinationIsLeftAlone) {
  fs::create_directories(m_destination);
  ASSERT_TRUE(write_file_atomic(m_destination + "/keep", "mine").ok());
  auto status = extract(craft({file("keep", "theirs")}));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            "cannot extract '" + m_archive + "': the destination '" + m_destination +
                "' already exists");
  EXPECT_EQ(read_file(m_destination + "/keep").value(), "mine");
}

TEST_F(SafeExtractTest, DamagedArchiveIsRejectedAndLeavesNothing) {
  auto bytes =
      tar_gz_bytes({TarEntry::bytes("a", std::string(5000, 'a')), TarEntry::bytes("b", "b")})
          .value();
  bytes.resize(bytes.size() / 2);
  auto status = extract(bytes);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message().rfind("cannot extract '" + m_archive + "': ", 0), 0u)
      << status.error().message();
  expect_nothing_left();
}

TEST_F(SafeExtractTest, ZipKeepsExecuteBitsAndLinksThatStayInside) {
  using test::ZipEntry;
  auto status = extract_zip({ZipEntry::directory("bin/"),
                             ZipEntry::file("bin/tool", "run me", 0755),
                             ZipEntry::file("lib/libx.1.dylib", "macho"),
                             ZipEntry::symlink("lib/libx.dylib", "libx.1.dylib"),
                             ZipEntry::file("data", "d", 04777)});
  ASSERT_TRUE(status.ok()) << status.error().message();
  fs::path out = m_destination;
  EXPECT_EQ(read_file((out / "bin/tool").string()).value(), "run me");
  EXPECT_EQ(fs::status(out / "bin/tool").permissions() & fs::perms::all, fs::perms(0755));
  EXPECT_EQ(fs::read_symlink(out / "lib/libx.dylib"), "libx.1.dylib");
  EXPECT_EQ(read_file((out / "lib/libx.dylib").string()).value(), "macho");
  EXPECT_EQ(fs::status(out / "data").permissions() & (fs::perms::all | fs::perms::set_uid),
            fs::perms(0755));
}

TEST_F(SafeExtractTest, ZipBombIsCaughtByTheBytesWrittenNotTheSizesDeclared) {
  test::ZipEntry bomb = test::ZipEntry::file("a", std::string(2 << 20, 'z'));
  bomb.declared_size = 10;
  ExtractLimits small;
  small.max_entry_bytes = 4096;
  auto status = extract_zip({bomb}, 0, small);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            "cannot extract '" + m_archive +
                "': entry 'a' is larger than the limit of 4096 bytes per entry");
  expect_nothing_left();

  // A liar under the limits is still caught: libarchive checks the size at the entry's end.
  bomb.content = std::string(3000, 'z');
  status = extract_zip({bomb}, 0, small);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            "cannot extract '" + m_archive +
                "': entry 'a' cannot be read: ZIP uncompressed data is wrong size (read 3000, "
                "expected 10)");
  expect_nothing_left();

  // The total counts the bytes of every entry.
  small.max_entry_bytes = 1 << 20;
  small.max_total_bytes = 1 << 20;
  status = extract_zip({test::ZipEntry::file("p1", std::string(600000, 'y')),
                        test::ZipEntry::file("p2", std::string(600000, 'y'))},
                       0,
                       small);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            "cannot extract '" + m_archive +
                "': the entries total more than the limit of 1048576 bytes");
  expect_nothing_left();
}

TEST_F(SafeExtractTest, ZipPathsOutsideTheDestinationAreRejected) {
  using test::ZipEntry;
  const std::pair<std::vector<ZipEntry>, std::string> cases[] = {
      {{ZipEntry::file("../evil", "x")}, "entry '../evil' contains a '..' component"},
      {{ZipEntry::file("/etc/evil", "x")}, "entry '/etc/evil' is an absolute path"},
      {{ZipEntry::symlink("up", "../..")}, "symbolic link 'up' -> '../..' leaves the destination"},
  };
  for (const auto& [entries, why] : cases) {
    fs::remove_all(m_destination);
    auto status = extract_zip(entries);
    ASSERT_FALSE(status.ok()) << why;
    EXPECT_EQ(status.error().message(), "cannot extract '" + m_archive + "': " + why);
    expect_nothing_left();
  }
  EXPECT_FALSE(fs::exists(m_dir / "evil"));
}

TEST_F(SafeExtractTest, StripComponentsDropsTopFoldersAndHardLinkTargetsAlike) {
  ExtractOptions options;
  options.strip_components = 1;
  auto status = extract(craft({dir("top"),
                               file("top/bin/tool", "t", 0755),
                               hardlink_to("top/bin/tool2", "top/bin/tool"),
                               symlink_to("top/current", "bin")}),
                        {},
                        options);
  ASSERT_TRUE(status.ok()) << status.error().message();
  EXPECT_EQ(read_file(m_destination + "/bin/tool2").value(), "t");
  EXPECT_EQ(read_file(m_destination + "/current/tool").value(), "t");
  EXPECT_FALSE(fs::exists(m_destination + "/top"));
}

TEST_F(SafeExtractTest, StripComponentsRefusesAFileItWouldLose) {
  ExtractOptions options;
  options.strip_components = 2;
  auto status = extract(craft({file("top/LICENSE", "MIT"), file("top/bin/x")}), {}, options);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            "cannot extract '" + m_archive +
                "': entry 'top/LICENSE' has no path left after stripping 2 leading path "
                "components");
  expect_nothing_left();
}

TEST_F(SafeExtractTest, MissingArchiveIsAnIoFailure) {
  auto status = safe_extract((m_dir / "missing.tar").string(), m_destination);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().category(), ErrorCategory::failure);
  expect_nothing_left();
}

} // namespace
} // namespace lume_unlock::util

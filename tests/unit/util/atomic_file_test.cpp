#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

namespace lume_unlock::util {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
protected:
  void SetUp() override { m_dir = test::fresh_test_dir("atomic_file"); }
  void TearDown() override { fs::remove_all(m_dir); }

  std::size_t entries() const {
    return static_cast<std::size_t>(
        std::distance(fs::directory_iterator(m_dir), fs::directory_iterator()));
  }

  fs::path m_dir;
};

TEST_F(AtomicFileTest, ReplaceDirectoryPutsTheNewTreeInPlaceAndLeavesNothingBeside) {
  const auto target = m_dir / "report";
  const auto staging = m_dir / ".report.tmp";
  fs::create_directories(target / "bench");
  ASSERT_TRUE(write_file_atomic((target / "old.txt").string(), "old").ok());
  fs::create_directories(staging);
  ASSERT_TRUE(write_file_atomic((staging / "new.txt").string(), "new").ok());

  ASSERT_TRUE(replace_directory(staging.string(), target.string()).ok());

  EXPECT_EQ(read_file((target / "new.txt").string()).value(), "new");
  EXPECT_FALSE(fs::exists(target / "old.txt"));
  EXPECT_EQ(entries(), 1u); // neither the staging folder nor the previous tree is left
}

TEST_F(AtomicFileTest, ReplaceDirectoryThatFailsKeepsThePreviousTree) {
  const auto target = m_dir / "bundle";
  fs::create_directories(target);
  ASSERT_TRUE(write_file_atomic((target / "bundle.json").string(), "{}").ok());

  const auto placed = replace_directory((m_dir / "missing").string(), target.string());

  ASSERT_FALSE(placed.ok());
  EXPECT_EQ(placed.error().message(),
            "cannot put '" + target.string() + "' in place: No such file or directory");
  EXPECT_EQ(read_file((target / "bundle.json").string()).value(), "{}");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, WritesNewFile) {
  auto path = (m_dir / "a.json").string();
  ASSERT_TRUE(write_file_atomic(path, "{\"x\":1}\n").ok());
  EXPECT_EQ(read_file(path).value(), "{\"x\":1}\n");
  EXPECT_EQ(entries(), 1u); // no temporary left behind
}

TEST_F(AtomicFileTest, ReplacesExistingFile) {
  auto path = (m_dir / "a.json").string();
  ASSERT_TRUE(write_file_atomic(path, "old").ok());
  ASSERT_TRUE(write_file_atomic(path, "new").ok());
  EXPECT_EQ(read_file(path).value(), "new");
}

TEST_F(AtomicFileTest, FailureMidwayLeavesOldFileIntactAndNoTemporary) {
  auto path = (m_dir / "record.json").string();
  ASSERT_TRUE(write_file_atomic(path, "previous content").ok());
  {
    auto file = AtomicFile::create(path);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE(file.value().write("half of the new cont").ok());
    EXPECT_TRUE(fs::exists(file.value().temporary_path()));
    // The writer stops here (an exception, a failed read of the source...): no commit.
  }
  EXPECT_EQ(read_file(path).value(), "previous content");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, FailedRenameLeavesOldFileIntact) {
  // A directory at the final name makes rename() fail after all data is written.
  auto path = (m_dir / "taken").string();
  fs::create_directories(path);
  auto file = AtomicFile::create(path);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(file.value().write("data").ok());
  auto committed = file.value().commit();
  ASSERT_FALSE(committed.ok());
  EXPECT_EQ(committed.error().message().rfind("cannot rename into place '" + path + "': ", 0), 0u)
      << committed.error().message();
  EXPECT_TRUE(fs::is_directory(path));
}

TEST_F(AtomicFileTest, AppliesTheRequestedMode) {
  auto path = (m_dir / "key").string();
  ASSERT_TRUE(write_file_atomic(path, "secret", 0600).ok());
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(AtomicFileTest, MissingDirectoryIsAClearError) {
  auto path = (m_dir / "missing" / "file").string();
  auto written = write_file_atomic(path, "x");
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.error().message(),
            "cannot create a temporary file for '" + path + "': No such file or directory");
}

TEST(ReadInputFile, ReadsRegularFilesUpToTheLimitAndNamesItBeyond) {
  test::TempDir dir;
  const std::string path = dir / "input";
  ASSERT_TRUE(write_file_atomic(path, std::string(2048, 'x')).ok());
  auto text = read_input_file(path, 2048, "the recipe");
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_EQ(text.value().size(), 2048u);

  auto refused = read_input_file(path, 1024, "the recipe");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().category(), ErrorCategory::usage);
  EXPECT_EQ(refused.error().message(),
            "cannot read the recipe '" + path + "': it is larger than the limit of 1 KiB");
}

TEST(ReadInputFile, RefusesDirectoriesDevicesAndFifosBeforeReading) {
  test::TempDir dir;
  const std::string fifo = dir / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, std::string> cases[] = {
      {dir.path(), "it is a directory"},
      {"/dev/zero", "it is not a regular file"},
      {fifo, "it is not a regular file"}, // no writer: opening must not wait for one
  };
  for (const auto& [path, why] : cases) {
    auto refused = read_input_file(path, 1 << 20, "the log");
    ASSERT_FALSE(refused.ok()) << path;
    EXPECT_EQ(refused.error().category(), ErrorCategory::usage) << path;
    EXPECT_EQ(refused.error().why(), why) << path;
  }
  EXPECT_FALSE(read_input_file(dir / "missing", 1, "the log").ok());
}

} // namespace
} // namespace lume_unlock::util

#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

namespace lume_unlock::util {
namespace {

using std::chrono::milliseconds;

TEST(FileLock, TheHolderWritesItselfAndASecondTakerTimesOutNamingIt) {
  test::TempDir dir("file-lock");
  const std::string path = dir / "lock";
  auto first = FileLock::acquire(path, "pid 1 ('first', started then)", milliseconds(0));
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_EQ(read_file(path).value(), "pid 1 ('first', started then)\n");

  const auto started = std::chrono::steady_clock::now();
  auto second = FileLock::acquire(path, "second", milliseconds(300));
  const auto waited = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().category(), ErrorCategory::failure);
  EXPECT_EQ(second.error().why(), "still held after 0.3 s by pid 1 ('first', started then)");
  EXPECT_GE(waited, milliseconds(300));
  EXPECT_EQ(read_file(path).value(), "pid 1 ('first', started then)\n")
      << "the loser writes nothing";
}

TEST(FileLock, AWaiterGetsTheLockWhenTheHolderLetsGo) {
  test::TempDir dir("file-lock");
  const std::string path = dir / "lock";
  auto first =
      std::make_unique<FileLock>(FileLock::acquire(path, "first", milliseconds(0)).value());
  std::thread release([&first] {
    std::this_thread::sleep_for(milliseconds(200));
    first.reset();
  });
  auto second = FileLock::acquire(path, "second", milliseconds(5000));
  release.join();
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_EQ(read_file(path).value(), "second\n");
}

TEST(FileLock, AMissingDirectoryIsAClearError) {
  test::TempDir dir("file-lock");
  auto lock = FileLock::acquire(dir / "no/such/lock", "me", milliseconds(0));
  ASSERT_FALSE(lock.ok());
  EXPECT_NE(lock.error().message().find("cannot open it"), std::string::npos)
      << lock.error().message();
}

} // namespace
} // namespace lume_unlock::util

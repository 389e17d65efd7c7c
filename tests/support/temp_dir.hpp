#pragma once

#include <filesystem>
#include <string>

namespace lume_unlock::test {

/// A fresh directory under $TMPDIR (default /tmp), removed (recursively) on destruction.
class TempDir {
public:
  explicit TempDir(const std::string& prefix = "lume-unlock-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return m_path; }
  std::string operator/(const std::string& child) const { return m_path + "/" + child; }

private:
  std::string m_path;
};

/// `::testing::TempDir()/<prefix>_<current test's name>`, emptied and created: a directory with a
/// fixed name per test, for fixtures that set it up in SetUp and remove it in TearDown.
std::filesystem::path fresh_test_dir(const std::string& prefix);

} // namespace lume_unlock::test

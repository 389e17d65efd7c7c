// `lume-unlock lock`'s load check: a program an archive's `files:` pins must load on the macOS
// the recipe names (source.macos), as llama.cpp's arm64 releases from b9428 on (minos 26) do not
// on macOS 15. The archive is a host file, so no server is needed.
#include "support/cli_run.hpp"
#include "support/file_io.hpp"
#include "support/temp_dir.hpp"
#include "support/zip_writer.hpp"
#include "unit/macho/fixture.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace lume_unlock::cli {
namespace {

class CliLock : public ::testing::Test {
protected:
  void SetUp() override { setenv("LUME_UNLOCK_CACHE_DIR", (dir / "cache").c_str(), 1); }
  void TearDown() override { unsetenv("LUME_UNLOCK_CACHE_DIR"); }

  /// A recipe installing release.zip (llama-bench = `program`, pinned by `files:`).
  std::string recipe_for(const std::string& program, const std::string& macos_line) {
    const std::string bytes = test::macho_fixture(program);
    const std::string zip =
        test::make_zip({test::ZipEntry::file("llama-b1/llama-bench", bytes, 0755)});
    EXPECT_TRUE(util::write_file_atomic(dir / "release.zip", zip).ok());
    const std::string path = dir / "recipe.yaml";
    EXPECT_TRUE(util::write_file_atomic(path,
                                        "source:\n  ipsw: latest\n  unattended: tahoe\n" +
                                            macos_line +
                                            "install:\n  - file: release.zip\n    unpack: zip\n"
                                            "    strip_components: 1\n"
                                            "    dest: /Users/lume/llama.cpp\n    files:\n"
                                            "      llama-bench: " +
                                            util::sha256_hex(bytes) + "\n")
                    .ok());
    return path;
  }

  test::TempDir dir{"lume-unlock-lock"};
};

TEST_F(CliLock, AProgramBuiltForANewerMacOSThanTheRecipesIsRefused) {
  const std::string recipe = recipe_for("arm64-minos-26", "  macos: 15.7.8\n");
  const auto refused = test::run_lume_unlock({"lock", recipe});
  EXPECT_EQ(refused.exit_code, 6) << refused.err;
  EXPECT_NE(refused.err.find("install[0].files.llama-bench (llama.cpp): its arm64 slice is built "
                             "for macOS 26.0 or later and the guest runs macOS 15.7.8, so dyld "
                             "refuses to load it (source.macos)\nhint: use a newer guest image "
                             "(macOS 26.0 or later), or a build of the program for macOS 15.7.8"),
            std::string::npos)
      << refused.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "recipe.lock.json"));

  const auto newer = test::run_lume_unlock({"lock", recipe_for("arm64-minos-26", "  macos: 26\n")});
  EXPECT_EQ(newer.exit_code, 0) << newer.err;
  EXPECT_NE(newer.err.find("checked: install[0].files.llama-bench: arm64 slice built for macOS "
                           "26.0, loads on macOS 26"),
            std::string::npos)
      << newer.err;
}

TEST_F(CliLock, WithoutTheRecipesMacOSTheCheckIsSkippedWithANote) {
  const auto locked = test::run_lume_unlock({"lock", recipe_for("arm64-minos-26", "")});
  EXPECT_EQ(locked.exit_code, 0) << locked.err;
  EXPECT_NE(locked.err.find("not checked: whether the programs of install: files: load on the "
                            "guest's macOS (the recipe names no source.macos"),
            std::string::npos)
      << locked.err;
  const auto bad = test::run_lume_unlock({"lock", recipe_for("arm64", "  macos: 15.x\n")});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("'15.x' is not a macOS version"), std::string::npos) << bad.err;
}

} // namespace
} // namespace lume_unlock::cli

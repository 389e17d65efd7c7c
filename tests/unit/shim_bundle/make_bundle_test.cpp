// Drives the built lume-unlock-make-bundle (shim/bundle/make_bundle.cpp) with small dummy files,
// as the `shim-bundle` CMake target does with the real shim.
#include "bundle/bundle.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

namespace lume_unlock {
namespace {

namespace fs = std::filesystem;

struct ToolRun {
  int exit_code;
  std::string output; ///< stdout and stderr together
};

/// Quotes for /bin/sh: the test's own temporary paths and fixed words only.
std::string quote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return quoted + "'";
}

ToolRun run_tool(const std::vector<std::string>& args) {
  std::string command = quote(LUME_UNLOCK_MAKE_BUNDLE);
  for (const auto& arg : args) {
    command += " " + quote(arg);
  }
  command += " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return {-1, "popen failed"};
  }
  std::string output;
  char buffer[4096];
  while (std::size_t got = fread(buffer, 1, sizeof buffer, pipe)) {
    output.append(buffer, got);
  }
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

class MakeBundleTool : public ::testing::Test {
protected:
  void SetUp() override {
    m_dir = test::fresh_test_dir("make_bundle");
    fs::create_directories(m_dir / "src");
    for (const char* name : {"liblume_unlock_shim.so", "lume_unlock_probe", "libMetalEmu.so"}) {
      ASSERT_TRUE(util::write_file_atomic(
                      (m_dir / "src" / name).string(), std::string("dummy ") + name, 0755)
                      .ok());
    }
    // The darwin files are real Mach-O programs: the tool lists their slices in bundle.json.
    fs::copy_file(std::string(LUME_UNLOCK_MACHO_FIXTURES) + "/fat-arm64-x86_64",
                  m_dir / "src" / "shim.dylib");
    fs::copy_file(std::string(LUME_UNLOCK_MACHO_FIXTURES) + "/arm64", m_dir / "src" / "probe");
  }
  void TearDown() override { fs::remove_all(m_dir); }

  std::vector<std::string> args(const std::string& out) const {
    return {"--out",
            out,
            "--version",
            "0.1.0",
            "--source-revision",
            "deadbeef",
            "--platform",
            "linux-x86_64",
            "--inject-env",
            "LD_PRELOAD",
            "--shim",
            (m_dir / "src/liblume_unlock_shim.so").string(),
            "--probe",
            (m_dir / "src/lume_unlock_probe").string(),
            "--support",
            (m_dir / "src/libMetalEmu.so").string(),
            "--platform",
            "darwin-arm64",
            "--inject-env",
            "DYLD_INSERT_LIBRARIES",
            "--shim",
            (m_dir / "src/shim.dylib").string(),
            "--probe",
            (m_dir / "src/probe").string()};
  }

  fs::path m_dir;
};

TEST_F(MakeBundleTool, WritesABundleThatLoadsFromDirectoryAndArchive) {
  auto out = (m_dir / "build").string();
  auto run = run_tool(args(out));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output,
            "wrote " + out + "/shim-bundle and " + out +
                "/lume-unlock-shim-bundle-0.1.0.tar.gz (darwin-arm64, linux-x86_64)\n");
  auto from_directory = bundle::load_bundle_directory(out + "/shim-bundle");
  ASSERT_TRUE(from_directory.ok()) << from_directory.error().message();
  const auto& manifest = from_directory.value().manifest();
  EXPECT_EQ(manifest.source_revision, "deadbeef");
  EXPECT_EQ(manifest.platforms.at("darwin-arm64").shim.path,
            "darwin-arm64/liblume-unlock-shim.dylib");
  EXPECT_EQ(manifest.platforms.at("linux-x86_64").probe->path, "linux-x86_64/lume-unlock-probe");
  // The slices of each darwin file, in the file's order; none for the Linux files.
  EXPECT_EQ(manifest.platforms.at("darwin-arm64").shim.slices,
            (std::vector<std::string>{"x86_64", "arm64"}));
  EXPECT_EQ(manifest.platforms.at("darwin-arm64").probe->slices, std::vector<std::string>{"arm64"});
  EXPECT_TRUE(manifest.platforms.at("linux-x86_64").shim.slices.empty());
  auto from_archive =
      bundle::load_bundle_archive(out + "/lume-unlock-shim-bundle-0.1.0.tar.gz", m_dir.string());
  ASSERT_TRUE(from_archive.ok()) << from_archive.error().message();
  EXPECT_EQ(from_archive.value().manifest(), manifest);
}

TEST_F(MakeBundleTool, AUniversalArm64AndArm64eShimIsAcceptedWithBothSlicesListed) {
  // The shape Apple's lipo gives the macOS build's shim (shim/runtime, macOS workflow).
  fs::copy_file(std::string(LUME_UNLOCK_MACHO_FIXTURES) + "/fat-arm64-arm64e",
                m_dir / "src" / "shim.dylib",
                fs::copy_options::overwrite_existing);
  auto out = (m_dir / "build").string();
  auto run = run_tool(args(out));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto loaded =
      bundle::load_bundle_archive(out + "/lume-unlock-shim-bundle-0.1.0.tar.gz", m_dir.string());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  EXPECT_EQ(loaded.value().manifest().platforms.at("darwin-arm64").shim.slices,
            (std::vector<std::string>{"arm64", "arm64e"}));
  const auto json =
      nlohmann::json::parse(util::read_file(out + "/shim-bundle/bundle.json").value());
  EXPECT_EQ(json["platforms"]["darwin-arm64"]["shim"]["slices"],
            nlohmann::json::array({"arm64", "arm64e"}));
}

TEST_F(MakeBundleTool, ADarwinFileThatIsNotAMachOIsRefused) {
  ASSERT_TRUE(
      util::write_file_atomic((m_dir / "src" / "probe").string(), "#!/bin/sh\n", 0755).ok());
  const std::string out = (m_dir / "out").string();
  const ToolRun run = run_tool(args(out));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find("platform 'darwin-arm64': '" + (m_dir / "src/probe").string() +
                            "': is a script (#!), not a Mach-O"),
            std::string::npos)
      << run.output;
  EXPECT_FALSE(fs::exists(out + "/shim-bundle"));
}

TEST_F(MakeBundleTool, TwoRunsGiveByteIdenticalArchives) {
  ASSERT_EQ(run_tool(args((m_dir / "a").string())).exit_code, 0);
  ASSERT_EQ(run_tool(args((m_dir / "b").string())).exit_code, 0);
  EXPECT_EQ(util::read_file((m_dir / "a/lume-unlock-shim-bundle-0.1.0.tar.gz").string()).value(),
            util::read_file((m_dir / "b/lume-unlock-shim-bundle-0.1.0.tar.gz").string()).value());
}

TEST_F(MakeBundleTool, BadUsageExitsTwoWithTheReason) {
  auto run = run_tool({"--out", (m_dir / "x").string(), "--version", "1", "--shim", "a.so"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.output.substr(0, run.output.find('\n')),
            "lume-unlock-make-bundle: error: bad usage: '--shim' must follow a --platform");
  auto missing = run_tool({"--version", "1"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.output.substr(0, missing.output.find('\n')),
            "lume-unlock-make-bundle: error: bad usage: --out is required");
}

TEST_F(MakeBundleTool, MissingShimFileFails) {
  auto run = run_tool({"--out",
                       (m_dir / "x").string(),
                       "--version",
                       "1",
                       "--platform",
                       "linux-x86_64",
                       "--inject-env",
                       "LD_PRELOAD",
                       "--shim",
                       "/nonexistent/shim.so"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.output,
            "lume-unlock-make-bundle: error: cannot build the shim bundle: cannot read "
            "'/nonexistent/shim.so': No such file or directory\n");
}

} // namespace
} // namespace lume_unlock

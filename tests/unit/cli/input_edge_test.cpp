// Issue 15: hostile inputs at the command line end in exit 2 with a message that says why, never
// in a crash, an endless read or a VM no Mac can hold.
#include "support/cli_run.hpp"
#include "support/file_io.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace lume_unlock::cli {
namespace {

using test::CliRun;

CliRun run(const std::vector<std::string>& args) {
  return test::run_lume_unlock(args);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(InputEdge, LogsThatCrashedStdRegexAreRefusedWithExit2) {
  test::TempDir dir;
  std::string repeated_label;
  for (int i = 0; i < 30000; ++i) {
    repeated_label += "a ";
  }
  const std::vector<std::string> logs = {
      "ggml_metal_init: " + std::string(30000, 'x') + "\n",
      "ggml_metal_init: " + repeated_label + "= true\n",
      "ggml_metal_init: GPU name: MTL0 (" + std::string(30000, 'a') + ")\n",
  };
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const std::string path = dir / ("log" + std::to_string(i));
    test::write_file(path, logs[i]);
    // No crash and no verdict: exit 2, naming the line that no llama.cpp writes.
    for (const auto& command : {std::vector<std::string>{"inspect-log", path, "--json"},
                                std::vector<std::string>{"inspect-log", path, "--expect-shim"}}) {
      auto r = run(command);
      EXPECT_EQ(r.exit_code, 2) << i << ": " << r.err;
      // --json puts the error on stdout as {"error": …}, the human form on stderr.
      EXPECT_TRUE(has(r.out + r.err, "line 1 is a Metal init or shim line of"))
          << i << ": " << r.out << r.err;
    }
  }
}

TEST(InputEdge, InspectLogTakesOnlyRegularFiles) {
  test::TempDir dir;
  auto r = run({"inspect-log", dir.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "cannot read the log '" + dir.path() + "': it is a directory")) << r.err;

  r = run({"inspect-log", "/dev/urandom"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "cannot read the log '/dev/urandom': it is not a regular file")) << r.err;
}

TEST(InputEdge, RecipeMustBeARegularFile) {
  test::TempDir dir;
  auto r = run({"create", "vm1", "--recipe", "/dev/zero", "--dry-run"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "cannot read recipe '/dev/zero': it is not a regular file")) << r.err;

  r = run({"create", "vm1", "--recipe", dir.path(), "--dry-run"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "it is a directory")) << r.err;
  EXPECT_FALSE(has(r.err, "the recipe is empty")) << r.err;
}

TEST(InputEdge, A16TiBVmIsRefused) {
  test::TempDir dir;
  const std::string recipe = dir / "huge.yaml";
  test::write_file(recipe,
                   "source:\n  image: ghcr.io/trycua/macos-tahoe-cua:latest\n"
                   "vm:\n  memory: 17179869184.5KB\n");
  auto r = run({"create", "vm1", "--recipe", recipe, "--dry-run"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "vm.memory")) << r.err;
  EXPECT_TRUE(has(r.err, "is more than the ceiling of 512GB")) << r.err;

  r = run({"create", "vm1", "--from", "ghcr.io/a/b:1", "--memory", "17179869184.5KB"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "is more than the ceiling of 512GB")) << r.err;

  r = run({"create", "vm1", "--from", "ghcr.io/a/b:1", "--memory", "1.5b"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "not a whole number of bytes")) << r.err;
}

TEST(InputEdge, VmNamesStartingWithADashAreRefusedBeforeAnyConnection) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"allow", "list", "--", "-rf"},
        std::vector<std::string>{"exec", "--", "-rf", "llama-bench"}}) {
    auto r = run(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(has(r.err, "it starts with '-', which reads as an option")) << r.err;
  }
}

// Issue 27: a number beyond double's range in a llama-bench JSON was "internal error".
TEST(InputEdge, HostJsonThatNoDoubleHoldsIsExit2) {
  test::TempDir dir;
  struct Case {
    std::string text;
    std::string why;
  };
  const Case cases[] = {
      {R"([{"build_number": 1e999}])",
       "it is not JSON we can hold: a number is out of range (number overflow parsing '1e999')"},
      {R"([{"avg_ts": -1e999}])",
       "it is not JSON we can hold: a number is out of range (number overflow parsing '-1e999')"},
      {R"([{"avg_ts": 1E+400)",
       "it is not JSON we can hold: a number is out of range (number overflow parsing '1E+400')"},
      {R"([{"avg_ts": 12)", "it ends early, after 14 bytes: the JSON is truncated"},
  };
  for (const auto& c : cases) {
    const std::string path = dir / "host.json";
    test::write_file(path, c.text);
    for (bool json : {false, true}) {
      std::vector<std::string> args = {"--lume-url",
                                       "http://127.0.0.1:1",
                                       "bench",
                                       "vm",
                                       "--model",
                                       "/m.gguf",
                                       "--host-json",
                                       path};
      if (json) {
        args.insert(args.begin(), "--json");
      }
      auto r = run(args);
      EXPECT_EQ(r.exit_code, 2) << c.text << r.out << r.err;
      EXPECT_TRUE(has(r.out + r.err, "bench --host-json '" + path + "': " + c.why))
          << c.text << ": " << r.out << r.err;
      EXPECT_FALSE(has(r.out + r.err, "internal error")) << r.out << r.err;
    }
  }
}

// Issue 27: messages that misled. Each case: the command, its exit code and the message line.
TEST(InputEdge, MessagesSayWhatIsReallyWrong) {
  test::TempDir dir;
  const std::string file = dir / "a-file";
  test::write_file(file, "not a directory\n");
  const std::string recipe = dir / "trust.yaml";
  test::write_file(recipe,
                   "source:\n  image: 127.0.0.1:1/a:1\ntrust:\n  keys:\n    - missing.pub\n");
  const std::string inline_recipe = dir / "inline.yaml";
  test::write_file(inline_recipe,
                   "source:\n  image: 127.0.0.1:1/a:1\ntrust:\n  keys:\n    - ok.pub\n"
                   "    - |\n      -----BEGIN PUBLIC KEY-----\n      AAAA\n"
                   "      -----END PUBLIC KEY-----\n");
  ASSERT_EQ(run({"key", "generate", dir / "ok"}).exit_code, 0);
  const std::string big_key = dir / "big.key";
  test::write_file(big_key, std::string(70 * 1024, 'k'), 0600);
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string line;
  };
  const Case cases[] = {
      {{"status", "bad name"},
       2,
       "lume-unlock: error: invalid VM name 'bad name': a space is not allowed\n"},
      {{"status", "../x"}, 2, "lume-unlock: error: invalid VM name '../x'"},
      {{"--state-dir", file, "status", "vm1"},
       2,
       "lume-unlock: error: state directory '" + file +
           "': it is not a directory\n"
           "hint: pass a directory you own with --state-dir or set LUME_UNLOCK_STATE_DIR to one\n"},
      {{"--state-dir", "", "status", "vm1"},
       2,
       "lume-unlock: error: state directory '': the path is empty\n"},
      {{"--state-dir", dir / "never-made", "status", "vm1"},
       2,
       "lume-unlock: error: status of VM 'vm1': lume-unlock has no record of it"},
      {{"key", "generate", dir.path() + "/"},
       2,
       "lume-unlock: error: key generate '" + dir.path() +
           "/': the PREFIX names a directory; it must name a file (PREFIX.key and PREFIX.pub)\n"
           "hint: add a file name, e.g.: lume-unlock key generate " +
           dir.path() + "/signing\n"},
      {{"key", "generate", dir.path()},
       2,
       "lume-unlock: error: key generate '" + dir.path() +
           "': the PREFIX names a directory; it must name a file (PREFIX.key and PREFIX.pub)\n"
           "hint: add a file name, e.g.: lume-unlock key generate " +
           dir.path() + "/signing\n"},
      {{"create", "vm1", "--recipe", recipe, "--dry-run", "--bundle", dir / "none"},
       2,
       "lume-unlock: error: " + recipe + ":5:7: trust.keys[0]: cannot read '" + dir.path() +
           "/missing.pub': No such file or directory\n"},
      {{"create", "vm1", "--recipe", inline_recipe, "--dry-run", "--bundle", dir / "none"},
       2,
       "lume-unlock: error: " + inline_recipe +
           ":6:7: trust.keys[1] (inline): is not a PEM public key"},
      {{"sign", "127.0.0.1:1/a@sha256:" + std::string(64, 'a'), "--key", big_key},
       2,
       "hint: a real one is far smaller than that; check that this is the right file\n"},
  };
  for (const auto& c : cases) {
    auto r = run(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.line << r.err;
    EXPECT_TRUE(has(r.err, c.line)) << r.err;
    EXPECT_FALSE(has(r.err, "internal error")) << r.err;
  }
  // Nothing hidden was written for the refused prefixes.
  EXPECT_FALSE(std::filesystem::exists(dir / ".key"));
  EXPECT_FALSE(std::filesystem::exists(dir / ".pub"));
}

} // namespace
} // namespace lume_unlock::cli

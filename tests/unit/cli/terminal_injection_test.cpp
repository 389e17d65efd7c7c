// Issue 27: outside text (a VM name, an image reference, a path) holding ESC/OSC sequences never
// reaches the terminal raw, in the text form on stderr or in --json on stdout, and a huge
// rejected value is cut instead of echoed whole.
#include "support/cli_run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lume_unlock::cli {
namespace {

using test::CliRun;

// Retitles the terminal (OSC 0 … BEL), then recolours it (CSI 31 m).
const std::string k_hostile = "\x1b]0;pwned\x07\x1b[31m";

/// The offset and value of the first byte below 0x20 (other than newline and tab) or DEL.
std::string first_raw_control(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if ((byte < 0x20 && byte != '\n' && byte != '\t') || byte == 0x7F) {
      return "byte " + std::to_string(byte) + " at " + std::to_string(i);
    }
  }
  return "";
}

struct Command {
  std::string name;
  std::vector<std::string> args;
};

std::vector<Command> commands_with_hostile_arguments(const test::TempDir& dir) {
  const std::string vm = "vm" + k_hostile;
  const std::string reference = "127.0.0.1:1/a" + k_hostile + ":1";
  const std::string path = dir / ("file" + k_hostile);
  const std::string digest_ref = "127.0.0.1:1/a@sha256:" + k_hostile;
  return {
      {"create name", {"create", vm, "--recipe", path, "--dry-run"}},
      {"create recipe", {"create", "vm", "--recipe", path, "--dry-run"}},
      {"pull reference", {"pull", reference, "vm"}},
      {"pull name", {"pull", "127.0.0.1:1/a:1", vm}},
      {"status", {"status", vm}},
      {"verify", {"verify", vm}},
      {"remove", {"remove", vm}},
      {"allow add name", {"allow", "add", vm, "e", "--program", "/x"}},
      {"allow add entry", {"allow", "add", "vm", "e" + k_hostile, "--program", "/x"}},
      {"allow add program", {"allow", "add", "vm", "e", "--program", "/x" + k_hostile}},
      {"allow remove", {"allow", "remove", vm, "e"}},
      {"allow remove entry", {"allow", "remove", "vm", "e" + k_hostile}},
      {"allow list", {"allow", "list", vm}},
      {"exec", {"exec", vm, "e"}},
      {"exec entry", {"exec", "vm", "e" + k_hostile}},
      {"ssh", {"ssh", vm, "--", "ls"}},
      {"bench name", {"bench", vm, "--model", "/m.gguf"}},
      {"bench model", {"bench", "vm", "--model", "/m" + k_hostile}},
      {"bench host json", {"bench", "vm", "--model", "/m.gguf", "--host-json", path}},
      {"bake recipe", {"bake", path, "--push", "127.0.0.1:1/a:1"}},
      {"bake push", {"bake", path, "--push", reference}},
      {"lock", {"lock", path}},
      {"resolve", {"resolve", reference}},
      {"inspect-log", {"inspect-log", path}},
      {"bundle push archive", {"bundle", "push", path, "127.0.0.1:1/a:1"}},
      {"key generate", {"key", "generate", dir / ("missing" + k_hostile + "/k")}},
      {"sign reference", {"sign", digest_ref, "--key", path}},
      {"verify-signature", {"verify-signature", reference, "--key", path}},
      {"doctor recipe", {"doctor", "--recipe", path, "--bundle", path}},
  };
}

TEST(TerminalInjection, NoCommandEchoesAControlCharacter) {
  test::TempDir dir;
  const std::vector<std::string> globals = {
      "--state-dir", dir / "state", "--lume-url", "http://127.0.0.1:1", "--lock-timeout", "1"};
  for (const Command& command : commands_with_hostile_arguments(dir)) {
    for (bool json : {false, true}) {
      std::vector<std::string> args = globals;
      if (json) {
        args.emplace_back("--json");
      }
      args.insert(args.end(), command.args.begin(), command.args.end());
      const CliRun r = test::run_lume_unlock(args);
      const std::string label = command.name + (json ? " --json" : "");
      EXPECT_NE(r.exit_code, 0) << label;
      EXPECT_EQ(first_raw_control(r.err), "") << label << ": " << r.err;
      EXPECT_EQ(first_raw_control(r.out), "") << label << ": " << r.out;
    }
  }
}

TEST(TerminalInjection, EscapedValueIsShownNotDropped) {
  const CliRun r = test::run_lume_unlock({"resolve", "127.0.0.1:1/a" + k_hostile + ":1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'127.0.0.1:1/a\\x1b]0;pwned\\x07\\x1b[31m:1'"), std::string::npos) << r.err;
}

TEST(TerminalInjection, AHugeReferenceIsCutInTheMessage) {
  const std::string reference = "127.0.0.1:1/" + std::string(120 * 1024, 'a') + ":1";
  for (bool json : {false, true}) {
    std::vector<std::string> args = {"resolve", reference};
    if (json) {
      args.insert(args.begin(), "--json");
    }
    const CliRun r = test::run_lume_unlock(args);
    EXPECT_EQ(r.exit_code, 2);
    const std::string& shown = json ? r.out : r.err;
    EXPECT_LT(shown.size(), 2000u) << shown.substr(0, 400);
    EXPECT_NE(shown.find("'127.0.0.1:1/aaaa"), std::string::npos) << shown.substr(0, 400);
    EXPECT_NE(shown.find("… (" + std::to_string(reference.size() + 2) + " bytes)"),
              std::string::npos)
        << shown.substr(0, 400);
  }
}

} // namespace
} // namespace lume_unlock::cli

// create with a recipe's shim: {dylib, sha256} (an externally built shim, e.g. Cua's certified
// build) against lume-sim and guest-sim: refused before anything is sent when the bytes are not
// the recipe's, installed content-addressed in place of the bundle's shim when they are, and
// named in the record, the report and verify. The external "dylib" here is the bundle's Linux
// shim with bytes appended (a different digest; the loader ignores bytes past its headers): a
// test cannot have the certified Mach-O bytes, so the certified naming has a unit test
// (tests/unit/provenance/shim_identity_test.cpp).
#include "pipeline_fixture.hpp"
#include "util/sha256.hpp"

namespace lume_unlock::test {
namespace {

class ExternalShim : public PipelineWorld {
protected:
  /// Writes the external shim and adds `shim.dylib` / `shim.sha256` (`digest`, or the file's
  /// own) to the recipe; returns the file's digest.
  std::string use_external_shim(const std::string& bytes, const std::string& digest = {}) {
    external = files.path() + "/dist/liblume-external.so";
    std::filesystem::create_directories(files.path() + "/dist");
    write_file(external, bytes, 0755);
    const std::string own = util::sha256_hex(bytes);
    std::string text = util::read_file(recipe).value();
    text.replace(text.find("shim:\n"),
                 6,
                 "shim:\n  dylib: " + external + "\n  sha256: " + (digest.empty() ? own : digest) +
                     "\n");
    write_file(recipe, text, 0644);
    return own;
  }
  /// The bundle's Linux shim with bytes appended: loads like it, with another digest.
  std::string rebuilt_shim() const {
    auto bundle = bundle::load_bundle_directory(SHIM_BUNDLE_DIR).value();
    return slurp(bundle.local_path(bundle.manifest().platforms.at("linux-x86_64").shim)) +
           "\nbuilt elsewhere\n";
  }
  std::string external;
};

TEST_F(ExternalShim, AWrongDigestIsRefusedNamingBothAndNothingIsSent) {
  start_world();
  const std::string wrong(64, 'e');
  const std::string own = use_external_shim(rebuilt_shim(), wrong);
  const std::string before =
      run_command({"/usr/bin/find", lume->home(), guest.info().home}).stdout_text;
  CliRun run = create();
  EXPECT_EQ(run.exit_code, 6) << run.out << run.err;
  const std::string message = json_of(run)["error"]["message"].get<std::string>();
  EXPECT_EQ(message,
            "recipe '" + recipe + "' field 'shim.dylib': '" + external + "' has SHA-256 " + own +
                ", the recipe's shim.sha256 is " + wrong)
      << message;
  // No VM made, no SSH contact, nothing in the guest.
  EXPECT_EQ(run_command({"/usr/bin/find", lume->home(), guest.info().home}).stdout_text, before);
  EXPECT_FALSE(guest_has(state.path() + "/vms/vm1/known_host"));
  EXPECT_FALSE(guest_has(support_dir()));
  // The dry run is refused alike: the check is part of the preflight.
  EXPECT_EQ(create({"--dry-run"}).exit_code, 6);
}

TEST_F(ExternalShim, TheRightBytesAreInstalledInTheirOwnDirectoryAndNamedEverywhere) {
  start_world();
  const std::string digest = use_external_shim(rebuilt_shim());
  CliRun run = create();
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const std::string dir = support_dir() + "/shim/" + digest;
  EXPECT_EQ(util::sha256_file_hex(dir + "/liblume-external.so").value(), digest);
  EXPECT_FALSE(guest_has(shim_dir())) << "the bundle's own shim is not installed";
  EXPECT_TRUE(guest_has(dir + "/libMetalEmu.so")) << "the bundle's support files sit beside it";
  // The agent injects the external file.
  const std::string plist = slurp(plist_path());
  EXPECT_NE(plist.find("<string>liblume-external.so</string>"), std::string::npos) << plist;
  EXPECT_NE(plist.find("<string>" + dir + "</string>"), std::string::npos) << plist;
  const auto doc = json_of(run);
  EXPECT_EQ(doc["probe"]["changed_families"], (nlohmann::json{"1006", "1007", "1008", "1009"}));
  EXPECT_EQ(doc["shim"]["external"], true);
  EXPECT_EQ(doc["shim"]["files"][0]["sha256"], digest);

  const auto record =
      nlohmann::json::parse(util::read_file(state.path() + "/vms/vm1/provenance.json").value());
  EXPECT_EQ(record["shim"]["external"], nlohmann::json({{"dylib", external}, {"sha256", digest}}));
  EXPECT_EQ(record["shim"]["files"][0]["sha256"], digest);

  ASSERT_EQ(cli({"report", "vm1", "--out", files.path() + "/report"}, false).exit_code, 0);
  const auto report = nlohmann::json::parse(slurp(files.path() + "/report/report.json"));
  EXPECT_EQ(report["shim"]["ran"], "external shim " + digest);
  EXPECT_NE(slurp(files.path() + "/report/report.md")
                .find("| shim that ran | external shim " + digest + " |"),
            std::string::npos);

  CliRun verified = cli({"verify", "vm1"});
  ASSERT_EQ(verified.exit_code, 0) << verified.out << verified.err;
  EXPECT_NE(verified.out.find("shim external " + digest +
                              ": scoped by the LaunchAgent environment only (upstream shim has "
                              "no guard file)\n"),
            std::string::npos)
      << verified.out;

  CliRun again = create();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(json_of(again)["changed"], 0) << again.out;
}

TEST_F(ExternalShim, ADylibThatChangesNoAnswerFailsTheProbeByItsAnswers) {
  start_world();
  // Not a loadable library: the loader skips it and the device answers stock. The probe step
  // judges the answers (an external shim reports no state of its own).
  use_external_shim("not a library\n");
  CliRun run = create();
  EXPECT_EQ(run.exit_code, 6) << run.out;
  const std::string message = json_of(run)["error"]["message"].get<std::string>();
  EXPECT_NE(message.find("Apple family 1006 answered false with the shim"), std::string::npos)
      << message;
  EXPECT_EQ(message.find("the shim is"), std::string::npos) << message;
}

} // namespace
} // namespace lume_unlock::test

// create from an IPSW recipe (source.ipsw + source.unattended) against lume-sim's asynchronous
// create (provisioning, then stopped), guest-sim and the real shim bundle.
#include "pipeline_fixture.hpp"

namespace lume_unlock::test {
namespace {

class IpswCreate : public PipelineWorld {
protected:
  void write_ipsw_recipe(const std::string& source) {
    std::string yaml = util::read_file(recipe).value();
    const auto start = yaml.find("source:");
    const auto end = yaml.find("vm:");
    yaml.replace(start, end - start, "source:\n" + source);
    ASSERT_TRUE(util::write_file_atomic(recipe, yaml).ok());
  }
  /// The fixture's create, with a one-second settle time for Lume's unattended phases.
  CliRun create_ipsw() { return create({"--install-settle", "1"}); }
};

TEST_F(IpswCreate, InstallsThroughLumeThenProvisionsAndRecordsNoImageDigest) {
  start_world();
  write_ipsw_recipe("  ipsw: latest\n  unattended: tahoe\n");
  CliRun run = create_ipsw();
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const auto doc = json_of(run);
  EXPECT_EQ(doc["reference"], "ipsw:latest");
  EXPECT_FALSE(doc.contains("image"));
  EXPECT_EQ(doc["steps"][1]["id"], "image");
  EXPECT_EQ(doc["steps"][1]["outcome"], "changed");
  EXPECT_EQ(doc["steps"][1]["summary"], "installed macOS from latest, unattended setup tahoe");
  // Lume was asked for the recipe's sizes at creation, so nothing needed resizing.
  EXPECT_EQ(doc["steps"][2]["outcome"], "unchanged") << doc["steps"][2];
  EXPECT_EQ(doc["probe"]["unlocked"]["max_threadgroup_memory"], 65536);
  auto record =
      nlohmann::json::parse(util::read_file(state.path() + "/vms/vm1/provenance.json").value());
  EXPECT_FALSE(record.contains("image")) << record.dump(2); // no digest to invent
  EXPECT_EQ(record["hardware"]["cpu"], 2);

  CliRun again = create_ipsw();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(json_of(again)["changed"], 0) << again.out;
}

TEST_F(IpswCreate, AFailedInstallNamesTheStepAndLeavesNothing) {
  start_world();
  write_ipsw_recipe("  ipsw: " + files.path() + "/missing.ipsw\n  unattended: tahoe\n");
  CliRun run = create_ipsw();
  EXPECT_EQ(run.exit_code, 3) << run.err << run.out;
  const std::string error = json_of(run)["error"].dump();
  EXPECT_NE(error.find("image"), std::string::npos) << error;
  EXPECT_NE(error.find("vm1"), std::string::npos) << error;
  EXPECT_FALSE(guest_has(lume->home() + "/vm1"));
}

TEST_F(IpswCreate, RefusesAnIpswWithoutUnattendedSetupBeforeAskingLume) {
  start_world();
  write_ipsw_recipe("  ipsw: latest\n");
  CliRun run = create_ipsw();
  EXPECT_EQ(run.exit_code, 2) << run.err << run.out;
  EXPECT_NE(json_of(run)["error"].dump().find("no SSH account"), std::string::npos) << run.out;
  EXPECT_FALSE(guest_has(lume->home() + "/vm1"));
}

} // namespace
} // namespace lume_unlock::test

// lume-unlock clone end to end: a golden VM made by create and passed by verify is stopped and
// copied through lume-sim (--guest-disks: every VM its own guest home, so a clone starts as its
// source's disk was), then converged as create would. The registry is gone before the clone, so
// anything it fetched would fail it.
#include "guest/ssh_session.hpp"
#include "lume/client.hpp"
#include "pipeline_fixture.hpp"
#include "util/sha256.hpp"

#include <gmock/gmock.h>

namespace lume_unlock::test {
namespace {

using ::testing::HasSubstr;

class Clone : public PipelineWorld {
protected:
  void SetUp() override { guest_home_in_images = true; }

  lume::LumeClient client() {
    lume::ClientOptions options;
    options.base_url = lume->url();
    return lume::LumeClient(options);
  }
  void stop(const std::string& vm) {
    auto c = client();
    ASSERT_TRUE(lume::stop_vm(c, vm, std::chrono::seconds(10), nullptr).ok());
  }
  void boot(const std::string& vm) {
    auto c = client();
    auto booted = lume::boot_vm(c, vm, std::chrono::seconds(10), nullptr);
    ASSERT_TRUE(booted.ok()) << booted.error().message();
  }
  /// vm1 made by create from a recipe with one install: item, passed by verify, stopped.
  void make_golden() {
    start_world({"--guest-disks"});
    write_file(files.path() + "/weights.bin", std::string(4096, 'w'));
    write_file(recipe,
               slurp(recipe) + "install:\n  - {file: \"" + files.path() +
                   "/weights.bin\", dest: \"" + guest.info().home + "/models/weights.bin\"}\n");
    CliRun made = create();
    ASSERT_EQ(made.exit_code, 0) << made.err << made.out;
    CliRun verified = cli({"verify", "vm1"});
    ASSERT_EQ(verified.exit_code, 0) << verified.err << verified.out;
    stop("vm1");
  }
  CliRun clone(std::vector<std::string> extra = {}) {
    std::vector<std::string> command = {
        "clone", "vm1", "vm2", "--bundle", SHIM_BUNDLE_DIR, "--ssh-wait", "2"};
    command.insert(command.end(), extra.begin(), extra.end());
    return cli(command, true, {"--json"});
  }
  std::string key_of(const std::string& vm) {
    const std::string line = slurp(state.path() + "/vms/" + vm + "/ssh_ed25519.pub");
    return line.substr(0, line.rfind(' '));
  }
  /// Refused with exit 2 naming `why`, and nothing made: no VM in Lume, no record, no keys
  /// (the per-VM lock create takes first may stay).
  void expect_refused(const CliRun& run, const std::string& why) {
    EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
    EXPECT_THAT(run.err + run.out, HasSubstr(why));
    EXPECT_FALSE(guest_has(lume->home() + "/vm2"));
    for (const char* file : {"provenance.json", "known_host", "ssh_ed25519"}) {
      EXPECT_FALSE(guest_has(state.path() + "/vms/vm2/" + file)) << file;
    }
  }
};

TEST_F(Clone, AVerifiedVmClonesWithNothingPulledOrSentAndItsOwnKey) {
  make_golden();
  const std::string golden_record = state.path() + "/vms/vm1/provenance.json";
  const std::string golden_digest = "sha256:" + util::sha256_file_hex(golden_record).value();
  registry.reset(); // nothing may come from the registry now

  CliRun run = clone();
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const auto doc = json_of(run);
  std::map<std::string, std::string> outcome;
  for (const auto& step : doc["steps"]) {
    outcome[step["id"].get<std::string>()] = step["outcome"].get<std::string>();
  }
  EXPECT_EQ(outcome["clone"], "changed");
  EXPECT_EQ(outcome.count("image"), 0u);
  EXPECT_EQ(outcome["keys"], "changed");
  for (const char* in_place : {"fetch", "resize", "install-shim", "install", "enablement"}) {
    EXPECT_EQ(outcome[in_place], "unchanged") << in_place << ": " << doc.dump();
  }
  const auto install = *step_of(doc, "install");
  EXPECT_THAT(install["summary"].get<std::string>(), HasSubstr("files in place"));

  // The record: where it came from, the inherited image, the same in the guest and on the host.
  const auto record = nlohmann::json::parse(slurp(state.path() + "/vms/vm2/provenance.json"));
  EXPECT_EQ(record["vm"], "vm2");
  EXPECT_EQ(record["cloned_from"]["vm"], "vm1");
  EXPECT_EQ(record["cloned_from"]["record_sha256"], golden_digest);
  EXPECT_THAT(record["cloned_from"]["ssh_host_key"].get<std::string>(), HasSubstr("SHA256:"));
  EXPECT_EQ(record["image"]["digest"], image_digest);
  EXPECT_EQ(slurp(support_dir() + "/provenance.json"),
            slurp(state.path() + "/vms/vm2/provenance.json"));

  // Its own key; vm1's is gone from the clone and no longer logs in.
  EXPECT_NE(key_of("vm2"), key_of("vm1"));
  const std::string authorized = slurp(guest.info().home + "/.ssh/authorized_keys");
  EXPECT_THAT(authorized, HasSubstr(key_of("vm2")));
  EXPECT_THAT(authorized, ::testing::Not(HasSubstr(key_of("vm1"))));
  guest::SshSessionOptions as_vm1;
  as_vm1.vm = "vm1";
  as_vm1.host = "127.0.0.1";
  as_vm1.port = ssh_port;
  as_vm1.user = guest.info().user;
  as_vm1.state_dir = state.path();
  auto refused = guest::SshSession::connect(as_vm1);
  EXPECT_FALSE(refused.ok()) << "vm1's key still opens vm2";

  EXPECT_EQ(cli({"verify", "vm2"}).exit_code, 0);
  // A second clone run converges: nothing to do.
  CliRun again = clone();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(json_of(again)["changed"], 0) << again.out;

  // Removing the clone leaves the golden VM as it was.
  ASSERT_EQ(cli({"remove", "vm2", "--delete-vm"}).exit_code, 0);
  boot("vm1");
  CliRun golden = cli({"verify", "vm1"});
  EXPECT_EQ(golden.exit_code, 0) << golden.out << golden.err;
  EXPECT_THAT(slurp(guest.info().home + "/.ssh/authorized_keys"), HasSubstr(key_of("vm1")));
}

TEST_F(Clone, RefusesARunningUnverifiedFailedOrOtherRecipeSourceAndMakesNothing) {
  make_golden();
  CliRun dry = clone({"--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(json_of(dry)["plan"], "clone") << dry.out;
  EXPECT_NE(step_of(json_of(dry), "clone"), nullptr) << dry.out;
  EXPECT_FALSE(guest_has(lume->home() + "/vm2"));

  // Another recipe: one byte more.
  const std::string original = slurp(recipe);
  write_file(recipe, original + "# edited\n");
  expect_refused(cli({"clone", "vm1", "vm2", "--recipe", recipe, "--bundle", SHIM_BUNDLE_DIR}),
                 "it was made from another recipe");
  write_file(recipe, original);

  // Running.
  boot("vm1");
  expect_refused(clone(), "Lume clones only a stopped VM");

  // A verify that fails (a llama.cpp log whose command buffers failed) is no golden VM.
  CliRun failed =
      cli({"verify",
           "vm1",
           "--llama-log",
           std::string(LUME_UNLOCK_FIXTURES) + "/llama-logs/broken-command-buffer.stderr"});
  ASSERT_EQ(failed.exit_code, 6) << failed.out << failed.err;
  stop("vm1");
  expect_refused(clone(), "its last 'lume-unlock verify'");

  // Never verified.
  std::filesystem::remove(state.path() + "/vms/vm1/verify.json");
  expect_refused(clone(), "it has never passed 'lume-unlock verify'");
}

} // namespace
} // namespace lume_unlock::test

// The create fault matrix: one fault per step where the simulators can inject it. Each case
// checks the step named in the error, the exit code (DESIGN §9), that no file sits half-written
// under a final name, and that a second create without the fault completes.
#include "lume/client.hpp"
#include "oci/manifest.hpp"
#include "pipeline_fixture.hpp"
#include "util/sha256.hpp"

#include <fstream>
#include <thread>

namespace lume_unlock::test {
namespace {

class CreateFault : public PipelineWorld {
protected:
  /// The error document of a failed --json run.
  static nlohmann::json error_of(const CliRun& run) { return json_of(run)["error"]; }

  /// Every final path of the shim install is either absent or exactly the bundle's file, and no
  /// temporary or staged file is left.
  void expect_no_half_installed_files() {
    auto bundle = bundle::load_bundle_directory(SHIM_BUNDLE_DIR).value();
    const auto& entry = bundle.manifest().platforms.at("linux-x86_64");
    std::vector<std::pair<std::string, std::string>> finals = {
        {shim_dir() + "/liblume-unlock-shim.so", entry.shim.sha256},
        {shim_dir() + "/libMetalEmu.so", entry.support.front().sha256},
        {probe_path(), entry.probe->sha256}};
    for (const auto& [path, sha] : finals) {
      if (guest_has(path)) {
        EXPECT_EQ(util::sha256_file_hex(path).value(), sha) << path;
      }
    }
    EXPECT_EQ(leftovers(), "");
  }

  void expect_recovers() {
    CliRun again = create();
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_TRUE(guest_has(state.path() + "/vms/vm1/provenance.json"));
    EXPECT_TRUE(guest_has(plist_path()));
  }
};

TEST_F(CreateFault, LumeErrorOnPatchFailsTheResizeStep) {
  start_world({"--fault", "PATCH /lume/vms/vm1=500x1"});
  CliRun run = create();
  EXPECT_EQ(run.exit_code, 3) << run.out;
  const auto error = error_of(run);
  EXPECT_EQ(error["message"].get<std::string>().rfind("create step 'resize': ", 0), 0u) << error;
  EXPECT_NE(error["hint"].get<std::string>().find("re-run 'lume-unlock create vm1 --recipe " +
                                                  recipe + " --bundle " + SHIM_BUNDLE_DIR +
                                                  "' to resume from this step"),
            std::string::npos)
      << error;
  expect_no_half_installed_files();
  expect_recovers();
}

TEST_F(CreateFault, LumeErrorOnRunFailsTheBootStep) {
  start_world({"--fault", "POST /lume/vms/vm1/run=500x1"});
  CliRun run = create();
  EXPECT_EQ(run.exit_code, 3) << run.out;
  EXPECT_EQ(error_of(run)["message"].get<std::string>().rfind("create step 'boot': ", 0), 0u)
      << run.out;
  expect_no_half_installed_files();
  expect_recovers();
}

TEST_F(CreateFault, DroppedLumeConnectionFailsTheBootStep) {
  start_world({"--drop", "POST /lume/vms/vm1/run=x1"});
  CliRun run = create();
  EXPECT_EQ(run.exit_code, 3) << run.out;
  EXPECT_EQ(error_of(run)["message"].get<std::string>().rfind("create step 'boot': ", 0), 0u)
      << run.out;
  expect_no_half_installed_files();
  expect_recovers();
}

TEST_F(CreateFault, TagMovedDuringThePullFailsTheImageStepWithExit4) {
  TempDir gate_dir("create-pull-gate");
  const std::string gate = gate_dir / "go";
  start_world({"--pull-gate", gate});
  oci::RegistryClient client(registry->client_options());
  LumeImageSpec spec;
  spec.seed = 5;
  auto moved = seed_lume_image(
      client, oci::parse_reference(registry->host() + "/lume-test/tahoe:next").value(), spec);
  ASSERT_TRUE(moved.ok());

  CliRun run;
  std::thread creating([&] { run = create(); });
  // Once Lume reports the pull, create has resolved the tag: move it, then let Lume fetch.
  lume::ClientOptions options;
  options.base_url = lume->url();
  lume::LumeClient observer(options);
  bool pulling = false;
  for (int i = 0; i < 500 && !pulling; ++i) {
    auto found = observer.find("vm1");
    pulling =
        found.ok() && found.value() && std::holds_alternative<lume::PullProgress>(*found.value());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(pulling);
  EXPECT_TRUE(
      client.push_manifest(image_ref, moved.value().manifest_bytes, oci::media_type::oci_manifest)
          .ok());
  std::ofstream(gate) << "";
  creating.join();

  EXPECT_EQ(run.exit_code, 4) << run.out;
  const std::string message = error_of(run)["message"].get<std::string>();
  EXPECT_EQ(message.rfind("create step 'image': ", 0), 0u) << message;
  EXPECT_NE(message.find("tag moved during pull"), std::string::npos) << message;
  EXPECT_FALSE(guest_has(support_dir())); // the guest was never touched
  EXPECT_FALSE(guest_has(state.path() + "/vms/vm1/provenance.json"));
  // The VM now holds what the tag names: create continues from there.
  expect_recovers();
  auto record =
      nlohmann::json::parse(util::read_file(state.path() + "/vms/vm1/provenance.json").value());
  EXPECT_EQ(record["image"]["digest"], moved.value().digest.str());
}

TEST_F(CreateFault, RefusedGuestLoginFailsTheConnectStep) {
  start_world();
  setenv("LUME_UNLOCK_PIPELINE_WRONG_PW", "not-the-password", 1);
  CliRun run = cli({"create",
                    "vm1",
                    "--recipe",
                    recipe,
                    "--bundle",
                    SHIM_BUNDLE_DIR,
                    "--ssh-wait",
                    "1",
                    "--ssh-port",
                    std::to_string(ssh_port),
                    "--ssh-user",
                    guest.info().user,
                    "--ssh-password-env",
                    "LUME_UNLOCK_PIPELINE_WRONG_PW"},
                   false,
                   {"--json"});
  unsetenv("LUME_UNLOCK_PIPELINE_WRONG_PW");
  EXPECT_EQ(run.exit_code, 5) << run.out;
  EXPECT_EQ(error_of(run)["message"].get<std::string>().rfind("create step 'connect': ", 0), 0u)
      << run.out;
  EXPECT_EQ(run.out.find("not-the-password"), std::string::npos);
  expect_no_half_installed_files();
  EXPECT_FALSE(guest_has(support_dir()));
  expect_recovers();
}

TEST_F(CreateFault, GuestSshConnectionRefusedFailsTheConnectStepWithExit5) {
  start_world();
  const int closed = free_loopback_port(); // nothing listens there
  CliRun run = cli({"create",
                    "vm1",
                    "--recipe",
                    recipe,
                    "--bundle",
                    SHIM_BUNDLE_DIR,
                    "--ssh-wait",
                    "1",
                    "--ssh-port",
                    std::to_string(closed),
                    "--ssh-user",
                    guest.info().user,
                    "--ssh-password-env",
                    "LUME_UNLOCK_PIPELINE_TEST_PW"},
                   false,
                   {"--json"});
  EXPECT_EQ(run.exit_code, 5) << run.out;
  EXPECT_EQ(error_of(run)["message"].get<std::string>().rfind("create step 'connect': ", 0), 0u)
      << run.out;
  EXPECT_FALSE(guest_has(support_dir()));
  expect_recovers();
}

TEST_F(CreateFault, DroppedGuestConnectionDuringTheShimUploadFailsInstallShim) {
  // The handshake, key installation and facts take a few KB; the shim payload is larger than
  // 32 KiB whatever the build type (a Release bundle without debug information: about 150 KB).
  start_world({}, 32 * 1024);
  CliRun run = create();
  EXPECT_TRUE(proxy->dropped());
  EXPECT_EQ(run.exit_code, 5) << run.out;
  EXPECT_EQ(error_of(run)["message"].get<std::string>().rfind("create step 'install-shim': ", 0),
            0u)
      << run.out;
  // With the connection gone, the SSH layer cannot delete its partial upload: it stays under a
  // temporary name in the staging directory, never under a final name.
  const std::string left = leftovers();
  EXPECT_EQ(left.rfind(support_dir() + "/staging/.payload-", 0), 0u) << left;
  EXPECT_NE(left.find(".tmp\n"), std::string::npos) << left;
  EXPECT_FALSE(guest_has(shim_dir() + "/liblume-unlock-shim.so"));
  EXPECT_FALSE(guest_has(probe_path()));
  expect_recovers();
}

TEST_F(CreateFault, ProbeAnswersUnchangedFailTheProbeStepNamingTheFamily) {
  start_world();
  setenv("LUME_UNLOCK_TEST_PROBE_ENV", "LUME_UNLOCK_DISABLE=1", 1);
  CliRun run = create();
  unsetenv("LUME_UNLOCK_TEST_PROBE_ENV");
  EXPECT_EQ(run.exit_code, 6) << run.out;
  const std::string message = error_of(run)["message"].get<std::string>();
  EXPECT_EQ(message,
            "create step 'probe': probe check in VM 'vm1': Apple family 1006 answered false with "
            "the shim (expected true through 1009) (and 5 more problems)");
  // Nothing was enabled and no record claims success.
  EXPECT_FALSE(guest_has(plist_path()));
  EXPECT_FALSE(guest_has(state.path() + "/vms/vm1/provenance.json"));
  expect_no_half_installed_files();
  expect_recovers();
}

} // namespace
} // namespace lume_unlock::test

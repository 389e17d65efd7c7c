// lume-unlock bake and pull --verify end to end: lume-sim (packing guest-sim's home into the
// images it pushes, restoring it on pull), guest-sim and a real docker-registry; digests
// cross-checked with skopeo.
#include "lume/client.hpp"
#include "pipeline_fixture.hpp"
#include "provenance/provenance.hpp"
#include "recipe/recipe.hpp"
#include "signing/signing.hpp"
#include "support/registry_server.hpp"
#include "util/ecdsa_key.hpp"
#include "util/sha256.hpp"

#include <chrono>
#include <thread>

namespace lume_unlock::test {
namespace {

class Bake : public PipelineWorld {
protected:
  void SetUp() override { guest_home_in_images = true; }

  std::string target(const std::string& tag = "1") const {
    return registry->host() + "/acme/tahoe-llm:" + tag;
  }
  CliRun bake(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> command = {"bake",
                                        recipe,
                                        "--push",
                                        target(),
                                        "--name",
                                        "vm1",
                                        "--bundle",
                                        SHIM_BUNDLE_DIR,
                                        "--ssh-wait",
                                        "2"};
    command.insert(command.end(), extra.begin(), extra.end());
    return cli(command, true, {"--json"});
  }
  std::string lock_path() const { return recipe::lock_path_for(recipe); }
};

TEST_F(Bake, PushesTheVmPrintsTheRegistrysDigestTagsItAndRecordsIt) {
  start_world();
  const auto started = std::chrono::steady_clock::now();
  CliRun run = bake();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  // lume-sim runs without --log-dir, as `lume serve` started by hand: Lume keeps no log file, so
  // bake says once that it cannot see Lume's log and waits for the tag alone.
  const std::string unseen = "cannot see Lume's log (";
  const auto first = run.err.find(unseen);
  EXPECT_NE(first, std::string::npos) << run.err;
  EXPECT_EQ(run.err.find(unseen, first + 1), std::string::npos) << "said more than once";
  const auto doc = json_of(run);
  ASSERT_TRUE(doc.is_object()) << run.out;
  std::cout << "[measure] bake (create + stop + push + verify + tag + record): " << seconds
            << " s, disk bytes verified " << doc["disk_bytes_verified"] << "\n";
  const std::string digest = doc["digest"];
  EXPECT_EQ(digest, skopeo_digest(target()));
  EXPECT_EQ(doc["pinned"], registry->host() + "/acme/tahoe-llm@" + digest);
  // The immutable tag holds the same manifest bytes.
  EXPECT_EQ(doc["immutable_tag"], "sha256-" + digest.substr(7));
  EXPECT_EQ(skopeo_digest(target("sha256-" + digest.substr(7))), digest);
  // The lock file: the source image pinned by the digest the bake used, and the bake.
  auto lock = recipe::parse_lock_file(util::read_file(lock_path()).value(), lock_path());
  ASSERT_TRUE(lock.ok()) << lock.error().message();
  ASSERT_NE(lock.value().find("source.image"), nullptr);
  EXPECT_EQ(lock.value().find("source.image")->digest, image_digest);
  ASSERT_EQ(lock.value().baked.size(), 1u);
  const recipe::BakedImage& baked = lock.value().baked[0];
  EXPECT_EQ(baked.digest, digest);
  EXPECT_EQ(baked.reference, target());
  EXPECT_EQ(baked.recipe_sha256, util::sha256_file_hex(recipe).value());
  // The shim files recorded are the ones the provenance record lists.
  auto record = provenance::read_provenance(state.path(), "vm1").value();
  ASSERT_TRUE(record.shim && record.shim->files);
  ASSERT_EQ(baked.shim_files.size(), record.shim->files->size());
  for (std::size_t i = 0; i < baked.shim_files.size(); ++i) {
    EXPECT_EQ(baked.shim_files[i].sha256, (*record.shim->files)[i].sha256);
  }
  auto host = nlohmann::json::parse(util::read_file(state.path() + "/vms/vm1/bake.json").value());
  EXPECT_EQ(host["digest"], digest);
  // The guest password reaches neither output.
  EXPECT_EQ(run.err.find(*guest.info().password), std::string::npos);
  EXPECT_EQ(run.out.find(*guest.info().password), std::string::npos);
}

// bake --sign-key: the digest bake pushed is signed in cosign's layout (read back with skopeo,
// not our client), verify-signature accepts it with the matching public key and refuses it with
// another, and the lock file names the key.
TEST_F(Bake, SignKeySignsThePushedDigestUnderItsSigTagAndVerifySignatureAcceptsIt) {
  start_world();
  for (const char* name : {"release", "stranger"}) {
    CliRun generated = cli({"key", "generate", files / name}, false);
    ASSERT_EQ(generated.exit_code, 0) << generated.err;
  }
  CliRun run = bake({"--sign-key", files / "release.key"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const auto doc = json_of(run);
  const std::string digest = doc["digest"];
  const std::string fingerprint =
      util::EcdsaPublicKey::from_pem(util::read_file(files / "release.pub").value(), "release")
          .value()
          .fingerprint();
  const std::string sig_tag = target("sha256-" + digest.substr(7) + ".sig");
  ASSERT_TRUE(doc.contains("signature")) << run.out;
  EXPECT_EQ(doc["signature"]["key"], fingerprint);
  EXPECT_EQ(doc["signature"]["reference"], sig_tag);

  auto raw = run_command(
      {"/usr/bin/skopeo", "inspect", registry->skopeo_trust(), "--raw", "docker://" + sig_tag});
  ASSERT_EQ(raw.exit_status, 0) << raw.stderr_text;
  const auto manifest = nlohmann::json::parse(raw.stdout_text);
  ASSERT_EQ(manifest["layers"].size(), 1u) << raw.stdout_text;
  EXPECT_EQ(manifest["layers"][0]["mediaType"], signing::simple_signing_media_type);
  EXPECT_TRUE(manifest["layers"][0]["annotations"].contains(signing::signature_annotation));

  CliRun verified =
      cli({"verify-signature", target(), "--key", files / "release.pub"}, false, {"--json"});
  EXPECT_EQ(verified.exit_code, 0) << verified.err << verified.out;
  const auto verified_doc = json_of(verified);
  EXPECT_EQ(verified_doc["image"], doc["pinned"]) << verified.out;
  EXPECT_EQ(verified_doc["key"], fingerprint) << verified.out;
  EXPECT_EQ(verified_doc["optional"]["recipe_sha256"], util::sha256_file_hex(recipe).value());
  CliRun refused = cli({"verify-signature", target(), "--key", files / "stranger.pub"}, false);
  EXPECT_EQ(refused.exit_code, 6) << refused.err;
  EXPECT_NE(refused.err.find("signed by another key"), std::string::npos) << refused.err;

  auto lock = recipe::parse_lock_file(util::read_file(lock_path()).value(), lock_path());
  ASSERT_TRUE(lock.ok()) << lock.error().message();
  ASSERT_EQ(lock.value().baked.size(), 1u);
  EXPECT_EQ(lock.value().baked[0].signed_by, fingerprint);
}

TEST_F(Bake, PulledByDigestVerifiesThenNamesATamperedShimFile) {
  start_world();
  CliRun baked = bake();
  ASSERT_EQ(baked.exit_code, 0) << baked.err << baked.out;
  const std::string pinned = json_of(baked)["pinned"];
  // Change the guest after the bake: the pull must bring the baked state back.
  const std::string shim = shim_dir() + "/liblume-unlock-shim.so";
  ASSERT_EQ(::unlink(shim.c_str()), 0);

  CliRun pulled = cli({"pull", pinned, "vm2", "--verify", "--ssh-wait", "2"}, true, {"--json"});
  ASSERT_EQ(pulled.exit_code, 0) << pulled.err << pulled.out;
  const auto doc = json_of(pulled);
  EXPECT_EQ(doc["digest"], json_of(baked)["digest"]);
  EXPECT_EQ(doc["verify"]["verified"], true) << doc.dump(2);
  EXPECT_TRUE(guest_has(shim));
  // The verified record became vm2's own: status checks the pulled VM like a created one.
  CliRun status = cli({"status", "vm2"});
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  auto adopted = provenance::read_provenance(state.path(), "vm2");
  ASSERT_TRUE(adopted.ok()) << adopted.error().message();
  EXPECT_EQ(adopted.value().vm, "vm2");
  ASSERT_TRUE(adopted.value().image && adopted.value().image->digest);
  EXPECT_EQ(*adopted.value().image->digest, json_of(baked)["digest"]);
  ASSERT_TRUE(adopted.value().shim && adopted.value().shim->files);

  // Tamper with the shim inside the pulled guest: --verify fails naming the file.
  std::string bytes = util::read_file(shim).value();
  bytes[bytes.size() / 2] ^= 0x5a;
  ASSERT_TRUE(util::write_file_atomic(shim, bytes, 0755).ok());
  CliRun tampered = cli({"pull", pinned, "vm2", "--verify", "--ssh-wait", "2"});
  EXPECT_EQ(tampered.exit_code, 6) << tampered.err << tampered.out;
  EXPECT_NE(tampered.out.find("not verified: 1 of "), std::string::npos) << tampered.out;
  EXPECT_NE(tampered.out.find("  shim file " + shim + ": expected "), std::string::npos)
      << tampered.out;
}

TEST_F(Bake, ALumeThatRefusesThePushRecordsNothing) {
  start_world({"--fault", "POST /lume/vms/push=400"});
  CliRun run = bake();
  EXPECT_EQ(run.exit_code, 3) << run.err << run.out;
  EXPECT_NE(json_of(run)["error"].dump().find("push"), std::string::npos) << run.out;
  EXPECT_FALSE(guest_has(lock_path()));
  EXPECT_FALSE(guest_has(state.path() + "/vms/vm1/bake.json"));
}

TEST_F(Bake, APushThatNeverArrivesTimesOutPointingAtLumesLogAndRecordsNothing) {
  // Lume accepts a push (202) and reports its failure only in its log: here it accepts and
  // never pushes.
  start_world(
      {"--fault", "POST /lume/vms/push=202:{\"message\":\"Push initiated in background\"}"});
  CliRun run = bake({"--push-timeout", "3"});
  EXPECT_EQ(run.exit_code, 3) << run.err << run.out;
  // With --json the error is the JSON document on stdout.
  const std::string error = json_of(run)["error"].dump();
  EXPECT_NE(error.find("the tag did not move within"), std::string::npos) << run.out;
  EXPECT_NE(error.find("lume serve"), std::string::npos) << run.out;
  EXPECT_FALSE(guest_has(lock_path()));
}

// Handlers.swift handlePush + ImageContainerRegistry.push: without GITHUB_USERNAME/GITHUB_TOKEN
// in `lume serve`'s environment the push fails in the background and only Lume's log says so;
// bake reads the log (GET /lume/logs) and stops at once instead of waiting for --push-timeout.
TEST_F(Bake, APushFailingForLackOfCredentialsEndsWithinSecondsWithLumesMessage) {
  TempDir logs("lume-launch-agent-logs");
  lume_env = {
      {"GITHUB_USERNAME", ""}, {"GITHUB_TOKEN", ""}, {"GHCR_USERNAME", ""}, {"GHCR_TOKEN", ""}};
  start_world({"--log-dir", logs.path()});
  const auto started = std::chrono::steady_clock::now();
  CliRun run = bake(); // the default --push-timeout: three hours
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "[measure] bake with a push failing for lack of credentials: " << seconds << " s\n";
  EXPECT_EQ(run.exit_code, 3) << run.err << run.out;
  EXPECT_LT(seconds, 10.0);
  const std::string error = json_of(run)["error"].dump();
  EXPECT_NE(error.find("Lume's log says the push failed: The operation couldn\u2019t be completed. "
                       "(lume.PushError error 3.)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("ERROR: Missing GitHub credentials. Please set GITHUB_USERNAME and "
                       "GITHUB_TOKEN environment variables"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("GITHUB_USERNAME and GITHUB_TOKEN, or GHCR_USERNAME and GHCR_TOKEN"),
            std::string::npos)
      << error;
  EXPECT_FALSE(guest_has(lock_path()));
  EXPECT_FALSE(guest_has(state.path() + "/vms/vm1/bake.json"));
}

TEST_F(Bake, ATagMovedBySomeoneElseIsDetectedAndNotRecorded) {
  start_world(
      {"--fault", "POST /lume/vms/push=202:{\"message\":\"Push initiated in background\"}"});
  // Someone else pushes another Lume image to the tag while the bake waits: after bake has
  // stopped the VM for its push (the VM ran, then stopped), and not at a fixed time, which a
  // loaded machine can reach before bake has even booted the VM.
  std::thread other([&] {
    lume::ClientOptions options;
    options.base_url = lume->url();
    lume::LumeClient observer(options);
    bool ran = false;
    bool stopped_after_running = false;
    for (int i = 0; i < 1200 && !stopped_after_running; ++i) {
      auto found = observer.find("vm1");
      const auto status =
          found.ok() && found.value() ? lume::status_of(*found.value()) : lume::VmStatus::other;
      ran = ran || status == lume::VmStatus::running;
      stopped_after_running = ran && status == lume::VmStatus::stopped;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(stopped_after_running) << "bake never stopped the VM for its push";
    std::this_thread::sleep_for(std::chrono::seconds(2)); // bake has asked Lume to push by now
    oci::RegistryClient client(registry->client_options());
    LumeImageSpec spec;
    spec.seed = 7;
    auto seeded = seed_lume_image(client, oci::parse_reference(target()).value(), spec);
    EXPECT_TRUE(seeded.ok()) << seeded.error().message();
  });
  CliRun run = bake({"--push-timeout", "60"});
  other.join();
  EXPECT_EQ(run.exit_code, 4) << run.err << run.out;
  const std::string error = json_of(run)["error"].dump();
  EXPECT_NE(error.find("which is not this VM's push"), std::string::npos) << run.out;
  EXPECT_NE(error.find("nvram.bin: sha256:"), std::string::npos) << run.out;
  EXPECT_FALSE(guest_has(lock_path()));
  EXPECT_FALSE(guest_has(state.path() + "/vms/vm1/bake.json"));
}

TEST_F(Bake, ARegistryThatNeedsCredentialsFailsBeforeTheVmIsBuilt) {
  start_world();
  // A real registry that requires a login nobody is given: every request gets 401 and a Basic
  // challenge.
  std::string why_not;
  auto locked = test::RegistryServer::start(
      why_not, test::RegistryServer::Transport::tls, test::RegistryServer::Access::login_required);
  ASSERT_NE(locked, nullptr) << why_not;
  CliRun run = cli({"bake",
                    recipe,
                    "--push",
                    locked->host() + "/acme/tahoe-llm:1",
                    "--registry-ca",
                    locked->ca_file(),
                    "--name",
                    "vm1",
                    "--bundle",
                    SHIM_BUNDLE_DIR});
  EXPECT_EQ(run.exit_code, 4) << run.err << run.out;
  EXPECT_NE(run.err.find("requires a username and password"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("'auths' of your Docker config.json"), std::string::npos) << run.err;
  EXPECT_FALSE(guest_has(lume->home() + "/vm1")) << "the VM was built before the check";
  EXPECT_FALSE(guest_has(lock_path()));
}

TEST_F(Bake, RejectsATargetWithoutATagBeforeTouchingAnything) {
  start_world();
  CliRun run =
      cli({"bake", recipe, "--push", registry->host() + "/acme/x@sha256:" + std::string(64, 'a')});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("it needs a tag and no digest"), std::string::npos) << run.err;
}

TEST_F(Bake, DryRunListsCreateAndBakeStepsAndChangesNothing) {
  start_world();
  CliRun run = cli({"bake", recipe, "--push", target(), "--bundle", SHIM_BUNDLE_DIR, "--dry-run"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const char* step : {"image", "install-shim", "provenance", "stop", "push", "record"}) {
    EXPECT_NE(run.out.find(std::string(" ") + step + ": "), std::string::npos) << step << run.out;
  }
  EXPECT_NE(run.out.find("VM 'recipe-bake'"), std::string::npos) << run.out;
  EXPECT_FALSE(guest_has(lock_path()));
}

} // namespace
} // namespace lume_unlock::test

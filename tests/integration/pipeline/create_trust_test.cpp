// A recipe's trust: block in `create`, end to end against lume-sim, guest-sim and docker-registry
// over TLS (pipeline_fixture.hpp): the source image and a shim bundle fetched from the registry
// must each carry a cosign signature by a trusted key. A refusal is exit 6 before Lume is asked
// to pull or create anything and before a byte reaches the guest, and nothing is recorded.
#include "pipeline_fixture.hpp"
#include "recipe/recipe.hpp"
#include "support/file_io.hpp"
#include "transfer/shim_bundle.hpp"
#include "util/ecdsa_key.hpp"
#include "util/sha256.hpp"

namespace lume_unlock::test {
namespace {

class CreateTrust : public PipelineWorld {
protected:
  void SetUp() override {
    start_world();
    for (const char* name : {"release", "stranger"}) {
      CliRun generated = cli({"key", "generate", files / name}, false);
      ASSERT_EQ(generated.exit_code, 0) << generated.err;
    }
    // The recipe trusts release.pub, written relative to the recipe.
    std::string text = util::read_file(recipe).value();
    text += "trust:\n  keys:\n    - release.pub\n";
    ASSERT_TRUE(util::write_file_atomic(recipe, text, 0644).ok());
  }

  std::string pinned_image() const {
    return image_ref.pinned(oci::Digest::parse(image_digest).value()).str();
  }
  void sign(const std::string& reference, const std::string& key) {
    CliRun signed_run = cli({"sign", reference, "--key", files / (key + ".key")}, false);
    ASSERT_EQ(signed_run.exit_code, 0) << signed_run.err;
  }
  std::string fingerprint(const std::string& key) const {
    return util::EcdsaPublicKey::from_pem(slurp(files / (key + ".pub")), key).value().fingerprint();
  }

  /// Pushes the build tree's bundle archive with `bundle push` (signed when `key` is given) and
  /// pins it in the recipe's shim.bundle. Returns the pinned reference.
  std::string pin_registry_bundle(const std::string& key) {
    const std::string tagged = registry->host() + "/acme/lume-unlock-shim:build";
    std::vector<std::string> push = {"--json", "bundle", "push", SHIM_BUNDLE_ARCHIVE, tagged};
    if (!key.empty()) {
      push.insert(push.end(), {"--sign-key", files / (key + ".key")});
    }
    CliRun pushed = run_lume_unlock(push);
    EXPECT_EQ(pushed.exit_code, 0) << pushed.err;
    const std::string pinned = json_of(pushed).value("pinned", "");
    std::string text = util::read_file(recipe).value();
    text.replace(text.find("shim:\n"), 6, "shim:\n  bundle: " + pinned + "\n");
    EXPECT_TRUE(util::write_file_atomic(recipe, text, 0644).ok());
    return pinned;
  }

  CliRun create_from_recipe() {
    return cli({"create", "vm1", "--recipe", recipe, "--ssh-wait", "2"}, true, {"--json"});
  }
  std::string error_message(const CliRun& run) const {
    const auto doc = json_of(run);
    return doc.is_object() ? doc["error"].value("message", "") : run.err;
  }

  /// Nothing happened: Lume was asked to change nothing, holds no VM, the guest got no shim
  /// byte, and neither a host record nor a lock file was written.
  void expect_nothing_done() {
    const std::string requests = lume->process().stderr_text();
    EXPECT_EQ(requests.find("POST /lume/"), std::string::npos) << requests;
    EXPECT_FALSE(guest_has(lume->home() + "/vm1"));
    EXPECT_FALSE(guest_has(support_dir() + "/shim"));
    EXPECT_FALSE(guest_has(support_dir() + "/provenance.json"));
    EXPECT_FALSE(guest_has(state.path() + "/vms/vm1/provenance.json"));
    EXPECT_FALSE(guest_has(recipe::lock_path_for(recipe)));
  }
};

TEST_F(CreateTrust, AnUnsignedImageIsRefusedAndNoVmIsCreated) {
  CliRun run = cli({"create", "vm1", "--recipe", recipe, "--bundle", SHIM_BUNDLE_DIR}, true);
  EXPECT_EQ(run.exit_code, 6) << run.out << run.err;
  EXPECT_NE(run.err.find("not signed"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(image_ref.repository_path()), std::string::npos) << run.err;
  expect_nothing_done();
}

TEST_F(CreateTrust, AnImageSignedByAnotherKeyIsRefusedAndNoVmIsCreated) {
  sign(pinned_image(), "stranger");
  CliRun run = create({});
  EXPECT_EQ(run.exit_code, 6) << run.out << run.err;
  EXPECT_NE(error_message(run).find("signed by another key"), std::string::npos) << run.out;
  expect_nothing_done();
}

TEST_F(CreateTrust, AnImageSignedByTheTrustedKeyIsCreatedAndTheKeyRecorded) {
  sign(pinned_image(), "release");
  CliRun run = create({});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(json_of(run)["image"]["digest"], image_digest);
  const auto record =
      nlohmann::json::parse(util::read_file(state.path() + "/vms/vm1/provenance.json").value());
  EXPECT_EQ(record["image"]["signed_by"], fingerprint("release")) << record["image"];
  EXPECT_TRUE(guest_has(shim_dir() + "/liblume-unlock-shim.so"));
}

TEST_F(CreateTrust, AnUnsignedRegistryBundleIsRefusedBeforeAByteReachesTheGuest) {
  sign(pinned_image(), "release"); // the image passes: the bundle alone is refused
  const std::string bundle = pin_registry_bundle("");
  CliRun run = create_from_recipe();
  EXPECT_EQ(run.exit_code, 6) << run.out << run.err;
  const std::string message = error_message(run);
  EXPECT_NE(message.find("shim bundle '" + bundle + "' (from recipe shim.bundle)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("not signed"), std::string::npos) << message;
  expect_nothing_done();
}

TEST_F(CreateTrust, ARegistryBundleSignedByAnotherKeyIsRefusedBeforeAByteReachesTheGuest) {
  sign(pinned_image(), "release");
  pin_registry_bundle("stranger");
  CliRun run = create_from_recipe();
  EXPECT_EQ(run.exit_code, 6) << run.out << run.err;
  EXPECT_NE(error_message(run).find("signed by another key"), std::string::npos) << run.out;
  expect_nothing_done();
}

TEST_F(CreateTrust, ARegistryBundleSignedByTheTrustedKeyIsInstalledAndBothKeysRecorded) {
  sign(pinned_image(), "release");
  const std::string bundle = pin_registry_bundle("release");
  CliRun run = create_from_recipe();
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto built = bundle::load_bundle_directory(SHIM_BUNDLE_DIR).value();
  EXPECT_EQ(util::sha256_file_hex(shim_dir() + "/liblume-unlock-shim.so").value(),
            built.manifest().platforms.at("linux-x86_64").shim.sha256);
  const std::string host = util::read_file(state.path() + "/vms/vm1/provenance.json").value();
  EXPECT_EQ(host, util::read_file(support_dir() + "/provenance.json").value());
  const auto record = nlohmann::json::parse(host);
  EXPECT_EQ(record["image"]["signed_by"], fingerprint("release")) << record["image"];
  EXPECT_EQ(record["shim"]["bundle_signed_by"], fingerprint("release")) << record["shim"];
  EXPECT_EQ(record["shim"]["bundle_digest"], bundle.substr(bundle.find('@') + 1));
}

} // namespace
} // namespace lume_unlock::test

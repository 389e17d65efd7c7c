// `share: true` end to end (issue 32): a model item stays in the host's artifact cache, the VM
// is started with the cache's blob folder as a read-only shared directory (lume-sim records the
// run request and exposes it at guest-sim's "/Volumes/My Shared Files"), and the guest path is
// a link into the share. Bytes over SSH: what the install step streamed (artifacts_sent).
#include "pipeline_fixture.hpp"
#include "provenance/provenance.hpp"
#include "support/artifact_server.hpp"
#include "support/file_io.hpp"
#include "util/sha256.hpp"

#include <filesystem>
#include <fstream>

namespace lume_unlock::test {
namespace {

namespace fs = std::filesystem;

class SharePipeline : public PipelineWorld {
protected:
  /// The world with lume-sim exposing shares at guest-sim's mount point, the model served at a
  /// Hugging Face-like path through the mirror map, and the recipe installing it with `share`.
  void start_share_world(bool share) {
    shared_files = guest_dir.path() + "/Volumes/My Shared Files";
    start_world({"--guest-share-root", shared_files});
    if (HasFatalFailure() || IsSkipped()) {
      return;
    }
    ASSERT_EQ(guest.info().shared_files, shared_files);
    setenv("LUME_UNLOCK_GUEST_SHARE_ROOT", shared_files.c_str(), 1);
    std::string why;
    server = ArtifactServer::start(*registry->ca(), why);
    ASSERT_NE(server, nullptr) << why;
    // Several MiB, so a copy of it could not hide among the shim's files.
    model = std::string(6 * 1024 * 1024, 'g');
    server->serve_bytes(k_model_path, model);
    setenv("LUME_UNLOCK_MIRROR", ("https://huggingface.co/=" + server->url("/")).c_str(), 1);
    write_share_recipe(share);
  }
  /// The recipe installing the model (shared or copied), after `copied_before` items when set.
  void write_share_recipe(bool share, const std::string& copied_before = "") {
    std::string yaml = slurp(base_recipe.empty() ? recipe : base_recipe);
    if (base_recipe.empty()) {
      base_recipe = files.path() + "/base-recipe.yaml";
      write_file(base_recipe, yaml, 0644);
    }
    yaml += "install:\n" + copied_before + "  - url: https://huggingface.co" +
            std::string(k_model_path) + "\n    sha256: " + util::sha256_hex(model) +
            "\n    dest: " + dest() + "\n" + (share ? "    share: true\n" : "");
    write_file(recipe, yaml, 0644);
  }
  void TearDown() override {
    unsetenv("LUME_UNLOCK_MIRROR");
    unsetenv("LUME_UNLOCK_GUEST_SHARE_ROOT");
    PipelineWorld::TearDown();
  }

  static constexpr const char* k_model_path =
      "/google/gemma-4-12B-it-qat-q4_0-gguf/resolve/29d097773436b69ff9feafd636ab4cf873786537/"
      "gemma-4-12b-it-qat-q4_0.gguf";

  std::string dest() const { return guest.info().home + "/models/gemma.gguf"; }
  std::string blob() const {
    return files.path() + "/cache/blobs/sha256/" + util::sha256_hex(model);
  }
  nlohmann::json session_of(const std::string& vm) const {
    std::ifstream in(lume->home() + "/" + vm + "/sessions.json");
    return nlohmann::json::parse(in, nullptr, false);
  }

  std::string shared_files;
  std::string base_recipe;
  std::unique_ptr<ArtifactServer> server;
  std::string model;
};

TEST_F(SharePipeline, ASharedModelCrossesNoByteOverSshAndTheGuestReadsTheVerifiedBlob) {
  start_share_world(true);
  CliRun run = create();
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const auto doc = json_of(run);
  std::cout << "[measure] artifact bytes sent over SFTP by create with the shared model ("
            << model.size() << " bytes): " << doc["artifacts_sent"]["bytes"] << "\n";
  EXPECT_EQ(doc["artifacts_sent"]["files"], 0) << run.out;
  EXPECT_EQ(doc["artifacts_sent"]["bytes"], 0) << run.out;
  EXPECT_NE((*step_of(doc, "install"))["summary"].get<std::string>().find(
                "1 shared item linked to the read-only shared cache (0 bytes sent)"),
            std::string::npos)
      << run.out;

  // The run request Lume received: the cache's blob folder, read-only (sessions.json, as Lume
  // records the shares of a running VM).
  const auto session = session_of("vm1");
  ASSERT_TRUE(session.contains("sharedDirectories")) << session.dump();
  EXPECT_EQ(session["sharedDirectories"],
            nlohmann::json::array({{{"hostPath", files.path() + "/cache/blobs/sha256"},
                                    {"tag", "com.apple.virtio-fs.automount"},
                                    {"readOnly", true}}}));

  // The guest path is a link into the share and reads as the verified bytes, as the guest user.
  const std::string in_share = shared_files + "/sha256/" + util::sha256_hex(model);
  ASSERT_TRUE(fs::is_symlink(dest()));
  EXPECT_EQ(fs::read_symlink(dest()).string(), in_share);
  CliRun hashed = guest_run({"shasum", "-a", "256", dest()});
  ASSERT_EQ(hashed.exit_code, 0) << hashed.err;
  EXPECT_EQ(hashed.out.substr(0, 64), util::sha256_hex(model)) << hashed.out;
  // Read-only: the guest user cannot write into the share.
  CliRun write = guest_run({"sh", "-c", "echo x > \"$1\"", "sh", in_share});
  EXPECT_NE(write.exit_code, 0) << "the guest wrote into the host's cache";
  EXPECT_EQ(util::sha256_file_hex(blob()).value(), util::sha256_hex(model));

  const auto record = provenance::read_provenance(state.path(), "vm1").value();
  ASSERT_TRUE(record.artifacts && record.artifacts->size() == 1u);
  const auto& artifact = (*record.artifacts)[0];
  EXPECT_TRUE(artifact.shared);
  ASSERT_EQ(artifact.files.size(), 1u);
  EXPECT_EQ(artifact.files[0].link.value_or(""), in_share);
  EXPECT_EQ(artifact.files[0].sha256, util::sha256_hex(model));
  EXPECT_EQ(artifact.files[0].size, model.size());
  EXPECT_EQ(cli({"status", "vm1"}).exit_code, 0);
  EXPECT_EQ(cli({"verify", "vm1"}).exit_code, 0);

  // Again: nothing to do, nothing sent.
  CliRun again = create();
  ASSERT_EQ(again.exit_code, 0) << again.err << again.out;
  EXPECT_EQ((*step_of(json_of(again), "install"))["outcome"], "unchanged") << again.out;

  // The cached blob changes on the host: the guest reads other bytes through the share.
  const std::string changed(model.size(), 'h');
  {
    std::ofstream out(blob(), std::ios::binary | std::ios::trunc);
    out << changed;
  }
  CliRun status = cli({"status", "vm1"}, true, {"--json"});
  EXPECT_EQ(status.exit_code, 6) << status.out << status.err;
  int named = 0;
  for (const auto& item : json_of(status).value("items", nlohmann::json::array())) {
    if (item["item"].get<std::string>().rfind("shared file " + dest(), 0) == 0) {
      ++named;
      EXPECT_EQ(item["ok"], false);
      EXPECT_EQ(item["expected"], util::sha256_hex(model));
      EXPECT_EQ(item["found"], util::sha256_hex(changed));
      EXPECT_NE(item["fix"].get<std::string>().find("cached blob changed on the host"),
                std::string::npos)
          << item.dump();
    }
  }
  EXPECT_EQ(named, 1) << status.out;
  CliRun verify = cli({"verify", "vm1"});
  EXPECT_EQ(verify.exit_code, 6) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("shared file " + dest()), std::string::npos) << verify.out;

  // create puts the verified bytes back into the cache (fetched anew), and status is clean.
  CliRun repaired = create();
  ASSERT_EQ(repaired.exit_code, 0) << repaired.err << repaired.out;
  EXPECT_EQ(util::sha256_file_hex(blob()).value(), util::sha256_hex(model));
  EXPECT_EQ(cli({"status", "vm1"}).exit_code, 0);

  // remove deletes the VM's records, never the host's cache.
  CliRun removed = cli({"remove", "vm1", "--delete-vm"});
  ASSERT_EQ(removed.exit_code, 0) << removed.err << removed.out;
  EXPECT_EQ(util::sha256_file_hex(blob()).value(), util::sha256_hex(model));
}

TEST_F(SharePipeline, WithoutShareTheModelCrossesSshAndTheCountShowsIt) {
  // The measure above can fail: the same model, copied, is counted in full.
  start_share_world(false);
  CliRun run = create();
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_GE(json_of(run)["artifacts_sent"]["bytes"].get<std::uint64_t>(), model.size()) << run.out;
  EXPECT_FALSE(fs::is_symlink(dest()));
  EXPECT_FALSE(session_of("vm1").contains("sharedDirectories")) << "no share asked for";
}

TEST_F(SharePipeline, AVmRunningWithoutTheShareIsRefusedWithTheFix) {
  // Created with a copy, the VM runs without the cache shared; now the recipe says share.
  start_share_world(false);
  ASSERT_EQ(create().exit_code, 0);
  // With a new copied item before the shared one: refused before that item is sent.
  const std::string notes = "notes for the guest\n";
  server->serve_bytes("/acme/notes.txt", notes);
  const std::string notes_dest = guest.info().home + "/models/notes.txt";
  write_share_recipe(true,
                     "  - url: https://huggingface.co/acme/notes.txt\n    sha256: " +
                         util::sha256_hex(notes) + "\n    dest: " + notes_dest + "\n");
  CliRun run = create();
  EXPECT_EQ(run.exit_code, 5) << run.err << run.out;
  run.err += run.out; // --json: the error document is on stdout
  EXPECT_NE(run.err.find("the guest does not see the cached blob at"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("stop the VM"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::is_symlink(dest())) << "the copy stays until the share is there";
  EXPECT_FALSE(fs::exists(notes_dest)) << "nothing is sent before the share is checked";
}

TEST_F(SharePipeline, CopiedAndSharedItemsAreCheckedInOneCommandAndRecordedInRecipeOrder) {
  start_share_world(true);
  const std::string notes = "notes for the guest\n";
  server->serve_bytes("/acme/notes.txt", notes);
  const std::string notes_dest = guest.info().home + "/models/notes.txt";
  const std::string copied_item =
      "  - url: https://huggingface.co/acme/notes.txt\n    sha256: " + util::sha256_hex(notes) +
      "\n    dest: " + notes_dest + "\n";
  write_share_recipe(true, copied_item);
  CliRun first = create();
  ASSERT_EQ(first.exit_code, 0) << first.err << first.out;
  EXPECT_NE(
      (*step_of(json_of(first), "install"))["summary"].get<std::string>().find("sent 1 of 1 files"),
      std::string::npos)
      << first.out;
  const auto record = provenance::read_provenance(state.path(), "vm1").value();
  ASSERT_TRUE(record.artifacts && record.artifacts->size() == 2u);
  EXPECT_FALSE((*record.artifacts)[0].shared);
  EXPECT_EQ((*record.artifacts)[0].dest, notes_dest);
  EXPECT_TRUE((*record.artifacts)[1].shared);
  EXPECT_EQ((*record.artifacts)[1].dest, dest());
  EXPECT_TRUE(fs::is_symlink(dest()));
  CliRun mixed = create();
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err << mixed.out;

  // The same two items, both copied: a no-op create checks them with as many commands.
  write_share_recipe(false, copied_item);
  ASSERT_EQ(create().exit_code, 0);
  EXPECT_FALSE(fs::is_symlink(dest()));
  CliRun copied = create();
  ASSERT_EQ(copied.exit_code, 0) << copied.err << copied.out;
  EXPECT_EQ(json_of(mixed)["counts"]["ssh_commands"], json_of(copied)["counts"]["ssh_commands"])
      << "a shared item costs no command of its own";
}

class ShareBake : public SharePipeline {
protected:
  void SetUp() override { guest_home_in_images = true; }
};

TEST_F(ShareBake, ABakeCopiesTheSharedModelIntoTheImage) {
  start_share_world(true);
  const std::string target = registry->host() + "/acme/tahoe-llm:1";
  CliRun baked = cli({"bake",
                      recipe,
                      "--push",
                      target,
                      "--name",
                      "vm1",
                      "--bundle",
                      SHIM_BUNDLE_DIR,
                      "--ssh-wait",
                      "2"},
                     true,
                     {"--json"});
  ASSERT_EQ(baked.exit_code, 0) << baked.err << baked.out;
  EXPECT_NE(baked.out.find("share: true items copied into the VM (an image must be complete)"),
            std::string::npos)
      << baked.out;
  ASSERT_FALSE(fs::is_symlink(dest())) << "a bake copies: the image must be complete";
  EXPECT_EQ(util::sha256_file_hex(dest()).value(), util::sha256_hex(model));

  // The image carries the model: gone from the guest, a pull of the image brings it back.
  fs::remove(dest());
  const std::string pinned = json_of(baked)["pinned"];
  CliRun pulled = cli({"pull", pinned, "vm2", "--verify", "--ssh-wait", "2"}, true, {"--json"});
  ASSERT_EQ(pulled.exit_code, 0) << pulled.err << pulled.out;
  EXPECT_EQ(json_of(pulled)["verify"]["verified"], true) << pulled.out;
  EXPECT_EQ(util::sha256_file_hex(dest()).value(), util::sha256_hex(model));
}

} // namespace
} // namespace lume_unlock::test

// The recipe's install: block end to end: a loopback HTTPS artifact server (the throwaway CA of
// the registry, trusted through SSL_CERT_FILE), lume-sim, guest-sim and the CLI: lock pins what
// the server serves, create fetches once into the cache and installs into the guest, status and
// verify re-hash, and every bad byte is refused before it reaches the guest.
#include "pipeline_fixture.hpp"
#include "provenance/provenance.hpp"
#include "recipe/recipe.hpp"
#include "support/artifact_server.hpp"
#include "support/file_io.hpp"
#include "support/llama_release.hpp"
#include "util/sha256.hpp"

#include <filesystem>

namespace lume_unlock::test {
namespace {

namespace fs = std::filesystem;

class InstallPipeline : public PipelineWorld {
protected:
  /// Starts the world and the artifact server with llama.cpp's release as its publisher packs
  /// it, behind a github.com-like signed redirect, and a model as Hugging Face serves one (a 302
  /// to its CDN advertising `model_advertised`, by default the model's true SHA-256), both
  /// reached through the mirror map; the recipe names the publishers' URLs and enables the
  /// release's llama-cli.
  void start_install_world(const std::string& archive_sha256 = {},
                           const std::string& model_advertised = {}) {
    start_world();
    if (HasFatalFailure() || IsSkipped()) {
      return;
    }
    std::string why;
    server = ArtifactServer::start(*registry->ca(), why);
    ASSERT_NE(server, nullptr) << why;
    release = make_llama_release(
        files.path() + "/release", "b10167", {{"llama-cli", "#!/bin/sh\necho llama-cli \"$@\"\n"}});
    archive = slurp(release.archive_path);
    model = std::string(200000, 'g');
    server->publish_release_asset(k_release_path, archive);
    server->serve_bytes(k_cdn_path, model);
    server->publish_hub_file(k_model_path,
                             model_advertised.empty() ? util::sha256_hex(model) : model_advertised,
                             model.size(),
                             server->url(k_cdn_path));
    const std::string mirror =
        "https://github.com/=" + server->url("/") + " https://huggingface.co/=" + server->url("/");
    setenv("LUME_UNLOCK_MIRROR", mirror.c_str(), 1);

    std::string yaml = slurp(recipe);
    yaml += "  - name: llama-cli\n    program: " + home() + "/llama.cpp/llama-cli\n" +
            "    agent: false\n";
    yaml += "install:\n  - url: https://github.com" + std::string(k_release_path) +
            "\n    unpack: tar.gz\n    strip_components: 1\n    dest: " + home() + "/llama.cpp\n" +
            (archive_sha256.empty() ? "" : "    sha256: " + archive_sha256 + "\n") +
            "  - url: https://huggingface.co" + std::string(k_model_path) +
            "\n    dest: " + home() + "/models/model.gguf\n";
    write_file(recipe, yaml, 0644);
  }
  void TearDown() override {
    unsetenv("LUME_UNLOCK_MIRROR");
    PipelineWorld::TearDown();
  }

  static constexpr const char* k_release_path =
      "/ggml-org/llama.cpp/releases/download/b10167/llama-b10167-bin-macos-arm64.tar.gz";
  static constexpr const char* k_model_path =
      "/TheBloke/TinyLlama-1.1B-Chat-v1.0-GGUF/resolve/52e7645ba7c309695bec7ac98f4f005b139cf465/"
      "tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf";
  static constexpr const char* k_cdn_path = "/cdn-lfs/repos/9f/ec/9fecc3b3";

  std::string home() const { return guest.info().home; }
  std::string cache_blobs() const { return files.path() + "/cache/blobs/sha256"; }
  std::size_t cached_blobs() const {
    std::error_code ec;
    return fs::exists(cache_blobs(), ec)
               ? static_cast<std::size_t>(std::distance(fs::directory_iterator(cache_blobs()), {}))
               : 0;
  }
  std::unique_ptr<ArtifactServer> server;
  LlamaRelease release;
  std::string archive;
  std::string model;
};

TEST_F(InstallPipeline, LockPinsTheArtifactsAndCreatesFromTheCacheDownloadNothing) {
  start_install_world();
  // Unpinned, the plan says so.
  CliRun planned = create({"--dry-run"});
  ASSERT_EQ(planned.exit_code, 0) << planned.err << planned.out;
  const auto plan = json_of(planned);
  ASSERT_NE(step_of(plan, "fetch"), nullptr) << planned.out;
  EXPECT_EQ(plan["steps"][1]["id"], "fetch") << "fetch comes before the image";
  const std::string described = (*step_of(plan, "fetch"))["description"];
  EXPECT_NE(described.find("install[0] https://github.com" + std::string(k_release_path) + " -> " +
                           home() +
                           "/llama.cpp (tar.gz; download, unpinned: 'lume-unlock lock' "
                           "pins it)"),
            std::string::npos)
      << described;
  EXPECT_EQ(server->requests(), 0u) << "a dry run fetches nothing";

  // lock downloads the archive once (an archive is pinned by what it unpacks to as well) and
  // pins the model from Hugging Face's X-Linked-Etag without a byte of its body.
  CliRun locked = cli({"lock", recipe}, false, {"--json"});
  ASSERT_EQ(locked.exit_code, 0) << locked.err << locked.out;
  const auto lock = recipe::load_lock_file(recipe::lock_path_for(recipe)).value();
  ASSERT_EQ(lock.artifacts.size(), 2u);
  EXPECT_EQ(lock.artifacts[0].field, "install[0]");
  EXPECT_EQ(lock.artifacts[0].sha256, util::sha256_hex(archive));
  EXPECT_EQ(lock.artifacts[0].size, archive.size());
  EXPECT_EQ(lock.artifacts[1].sha256, util::sha256_hex(model));
  EXPECT_EQ(lock.artifacts[1].size, model.size());
  EXPECT_EQ(server->requests_for(k_cdn_path), 0u) << "the model's CDN was never asked";
  // Each download first asks for one byte, to learn whether ranges are accepted (issue 32).
  EXPECT_EQ(server->body_bytes_sent(), archive.size() + 1);

  // The plan finds the archive in the cache; create downloads only the model, verified
  // against the advertised pin.
  const std::string cached = (*step_of(json_of(create({"--dry-run"})), "fetch"))["description"];
  EXPECT_NE(cached.find("in the cache, sha256:" + util::sha256_hex(archive).substr(0, 12)),
            std::string::npos)
      << cached;
  CliRun run = create();
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_EQ(server->body_bytes_sent(), archive.size() + model.size() + 2);
  const std::uint64_t requests_after_create = server->requests();
  EXPECT_EQ(slurp(home() + "/llama.cpp/llama-cli"), "#!/bin/sh\necho llama-cli \"$@\"\n");
  EXPECT_TRUE(fs::is_symlink(home() + "/llama.cpp/libllama.0.dylib"));
  EXPECT_EQ(slurp(home() + "/llama.cpp/LICENSE"), release.files.at("LICENSE"));
  EXPECT_EQ(slurp(home() + "/models/model.gguf"), model);
  const auto doc = json_of(run);
  ASSERT_NE(step_of(doc, "install"), nullptr) << run.out;
  EXPECT_EQ((*step_of(doc, "install"))["outcome"], "changed");

  // Recorded on the host (and the guest): each artifact with its files.
  const auto record = provenance::read_provenance(state.path(), "vm1").value();
  ASSERT_TRUE(record.artifacts);
  ASSERT_EQ(record.artifacts->size(), 2u);
  EXPECT_EQ((*record.artifacts)[0].sha256, util::sha256_hex(archive));
  EXPECT_EQ((*record.artifacts)[0].source, "https://github.com" + std::string(k_release_path))
      << "the publisher's URL is recorded, not the mirror's";
  const std::size_t tree = release.files.size() + release.links.size();
  EXPECT_EQ((*record.artifacts)[0].files.size(), tree);
  EXPECT_EQ((*record.artifacts)[1].files[0].path, home() + "/models/model.gguf");
  EXPECT_EQ(
      provenance::parse_provenance(slurp(support_dir() + "/provenance.json")).value().artifacts,
      record.artifacts);

  ASSERT_TRUE(doc.contains("artifacts")) << run.out;
  EXPECT_EQ(doc["artifacts"][0]["from_cache"], true);
  EXPECT_EQ(doc["artifacts"][0]["network_bytes"], 0);
  EXPECT_EQ(doc["artifacts"][1]["sha256"], util::sha256_hex(model));
  EXPECT_EQ(doc["artifacts"][1]["from_cache"], false);
  EXPECT_EQ(doc["artifacts_sent"]["files"], tree + 1);

  // A second create changes nothing and asks the server for nothing.
  CliRun again = create();
  ASSERT_EQ(again.exit_code, 0) << again.err << again.out;
  EXPECT_EQ((*step_of(json_of(again), "install"))["outcome"], "unchanged") << again.out;
  EXPECT_EQ(server->requests(), requests_after_create);
  EXPECT_EQ(json_of(again)["artifacts_sent"]["files"], 0);
  EXPECT_EQ(leftovers(), "");
}

TEST_F(InstallPipeline, ALockedCreateRefusesChangedBytesBeforeAnythingReachesTheGuest) {
  start_install_world();
  ASSERT_EQ(cli({"lock", recipe}, false).exit_code, 0);
  // Another host (an empty cache) and a source that now serves other bytes.
  fs::remove_all(files.path() + "/cache");
  server->serve_wrong_bytes(true);
  CliRun run = create();
  EXPECT_EQ(run.exit_code, 4) << run.err << run.out;
  run.err += run.out; // --json: the error document is on stdout
  EXPECT_NE(run.err.find(util::sha256_hex(archive)), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("install[0]"), std::string::npos) << run.err;
  EXPECT_EQ(cached_blobs(), 0u) << "the cache keeps nothing that failed its digest";
  EXPECT_FALSE(guest_has(home() + "/llama.cpp")) << "no byte reached the guest";
  EXPECT_FALSE(fs::exists(state.path() + "/vms/vm1/provenance.json")) << "nothing was created";
}

TEST_F(InstallPipeline, ACreateRefusesModelBytesThatDisagreeWithTheAdvertisedPin) {
  const std::string advertised(64, 'a');
  start_install_world({}, advertised);
  CliRun locked = cli({"lock", recipe}, false);
  ASSERT_EQ(locked.exit_code, 0) << locked.err << locked.out;
  EXPECT_EQ(recipe::load_lock_file(recipe::lock_path_for(recipe)).value().artifacts[1].sha256,
            advertised);
  EXPECT_EQ(server->requests_for(k_cdn_path), 0u);

  CliRun run = create();
  EXPECT_EQ(run.exit_code, 4) << run.err << run.out;
  run.err += run.out; // --json: the error document is on stdout
  EXPECT_NE(run.err.find(advertised), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(util::sha256_hex(model)), std::string::npos)
      << "the digest of the bytes received is named: " << run.err;
  EXPECT_FALSE(guest_has(home() + "/models")) << "no byte of the model reached the guest";
  EXPECT_FALSE(guest_has(home() + "/llama.cpp")) << "nothing is installed before all is verified";
  EXPECT_EQ(cached_blobs(), 1u) << "only the verified archive stays in the cache";
}

TEST_F(InstallPipeline, APinnedRecipeRefusesATamperedDownloadNamingBothDigests) {
  const std::string wrong(64, 'e');
  start_install_world(wrong);
  CliRun run = create();
  EXPECT_EQ(run.exit_code, 4) << run.err << run.out;
  run.err += run.out; // --json: the error document is on stdout
  EXPECT_NE(run.err.find(wrong), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(util::sha256_hex(archive)), std::string::npos)
      << "the actual digest is named: " << run.err;
  EXPECT_EQ(cached_blobs(), 0u);
  EXPECT_FALSE(guest_has(home() + "/llama.cpp"));
}

TEST_F(InstallPipeline, AChangedGuestFileIsDriftAndCreatePutsItBack) {
  start_install_world(util::sha256_hex(std::string()) /* placeholder, replaced below */);
  // Pin the real digest in the recipe itself this time.
  std::string yaml = slurp(recipe);
  const std::string placeholder = util::sha256_hex(std::string());
  yaml.replace(yaml.find(placeholder), placeholder.size(), util::sha256_hex(archive));
  write_file(recipe, yaml, 0644);
  ASSERT_EQ(create().exit_code, 0);
  EXPECT_EQ(cli({"status", "vm1"}).exit_code, 0);

  const std::string library = home() + "/llama.cpp/libllama.0.0.10167.dylib";
  const std::string link = home() + "/llama.cpp/libllama.0.dylib";
  write_file(library, "tampered");
  fs::remove(link);
  write_file(link, "a copy where the release has a link");
  CliRun status = cli({"status", "vm1"}, true, {"--json"});
  EXPECT_EQ(status.exit_code, 6) << status.out << status.err;
  int named = 0;
  for (const auto& item : json_of(status).value("items", nlohmann::json::array())) {
    if (item["item"] == "artifact file " + library) {
      ++named;
      EXPECT_EQ(item["ok"], false);
      EXPECT_EQ(item["found"], util::sha256_hex("tampered"));
      EXPECT_NE(item["fix"].get<std::string>().find("lume-unlock create vm1 --recipe"),
                std::string::npos);
    }
    if (item["item"] == "artifact link " + link) {
      ++named;
      EXPECT_EQ(item["ok"], false);
      EXPECT_EQ(item["expected"], "-> libllama.0.0.10167.dylib");
    }
  }
  EXPECT_EQ(named, 2) << status.out;
  EXPECT_EQ(cli({"verify", "vm1"}).exit_code, 6);

  CliRun repaired = create();
  ASSERT_EQ(repaired.exit_code, 0) << repaired.err;
  EXPECT_EQ(slurp(library), release.files.at("libllama.0.0.10167.dylib"));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(cli({"status", "vm1"}).exit_code, 0);
}

} // namespace
} // namespace lume_unlock::test

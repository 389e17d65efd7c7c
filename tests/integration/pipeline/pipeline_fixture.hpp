#pragma once
// One provisioned world for the create/status/verify/remove tests: a docker-registry seeded
// with a small Lume image, guest-sim (a real sshd with a macOS userland), lume-sim reporting
// guest-sim's address and pulling from the registry, a recipe naming the registry image with
// the installed probe enabled as an agent, and the CLI run in-process.
#include "bundle/bundle.hpp"
#include "oci/registry_client.hpp"
#include "support/cli_run.hpp"
#include "support/dropping_proxy.hpp"
#include "support/file_io.hpp"
#include "support/guest_sim.hpp"
#include "support/lume_image_seeder.hpp"
#include "support/lume_sim.hpp"
#include "support/process.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace lume_unlock::test {

/// The one JSON document a --json run printed (discarded when it printed none).
inline nlohmann::json json_of(const CliRun& run) {
  return nlohmann::json::parse(run.out, nullptr, false);
}

/// The step `id` of a --json plan or outcome document, or null.
inline const nlohmann::json* step_of(const nlohmann::json& doc, const std::string& id) {
  if (!doc.contains("steps")) {
    return nullptr;
  }
  for (const auto& s : doc["steps"]) {
    if (s["id"] == id) {
      return &s;
    }
  }
  return nullptr;
}

class PipelineWorld : public ::testing::Test {
protected:
  /// Starts everything; `lume_args` are extra lume-sim arguments (faults).
  /// With `drop_ssh_after_bytes`, the guest is reached through a DroppingProxy.
  void start_world(const std::vector<std::string>& lume_args = {},
                   std::optional<std::uint64_t> drop_ssh_after_bytes = std::nullopt) {
    auto problem = guest.start();
    LUME_UNLOCK_REQUIRE(!problem, problem.value_or(""));
    LUME_UNLOCK_REQUIRE(guest.info().password.has_value(),
                        "guest-sim runs key-only unless it runs as root");
    ssh_port = guest.info().port;
    if (drop_ssh_after_bytes) {
      proxy = std::make_unique<DroppingProxy>(guest.info().port, *drop_ssh_after_bytes);
      ASSERT_GT(proxy->port(), 0);
      ssh_port = proxy->port();
    }
    std::string why;
    registry = RegistryServer::start(why);
    LUME_UNLOCK_REQUIRE(registry != nullptr, why);
    // lume-unlock trusts the registry's throwaway CA through SSL_CERT_FILE, lume-sim through
    // --registry-ca (the Mac's keychain).
    setenv("SSL_CERT_FILE", registry->ca_file().c_str(), 1);
    // Each test its own artifact cache: never the user's ~/.cache.
    setenv("LUME_UNLOCK_CACHE_DIR", (files.path() + "/cache").c_str(), 1);
    oci::RegistryClient client(registry->client_options());
    image_ref = oci::parse_reference(registry->host() + "/lume-test/tahoe:latest").value();
    auto seeded = seed_lume_image(client, image_ref);
    ASSERT_TRUE(seeded.ok()) << seeded.error().message();
    image_digest = seeded.value().digest.str();
    start_lume(lume_args);
    setenv("LUME_UNLOCK_PIPELINE_TEST_PW", guest.info().password->c_str(), 1);
    write_recipe();
  }

  void start_lume(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--guest-address",
                                     "127.0.0.1",
                                     "--guest-ssh-port",
                                     std::to_string(ssh_port),
                                     "--registry",
                                     registry->host(),
                                     "--registry-ca",
                                     registry->ca_file(),
                                     "--create-delay-ms",
                                     "0",
                                     "--boot-delay-ms",
                                     "0",
                                     "--stop-delay-ms",
                                     "0",
                                     "--pull-delay-ms",
                                     "0"};
    if (guest_home_in_images) {
      args.insert(args.end(), {"--guest-home", guest.info().home});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    // Lume pushes only with credentials in its environment (ImageContainerRegistry.swift).
    lume = std::make_unique<LumeSim>(LUME_SIM_BINARY, args, lume_env);
    LUME_UNLOCK_REQUIRE(lume->started(), lume->failure());
  }

  void TearDown() override {
    unsetenv("SSL_CERT_FILE");
    unsetenv("LUME_UNLOCK_CACHE_DIR");
    unsetenv("LUME_UNLOCK_PIPELINE_TEST_PW");
    unsetenv("LUME_UNLOCK_TEST_PROBE_ENV");
  }

  /// The linux-x86_64 entry of the build's bundle: where its shim lands in the guest.
  std::string shim_dir() const {
    auto bundle = bundle::load_bundle_directory(SHIM_BUNDLE_DIR);
    EXPECT_TRUE(bundle.ok());
    return support_dir() + "/shim/" +
           bundle.value().manifest().platforms.at("linux-x86_64").shim.sha256;
  }
  std::string support_dir() const {
    return guest.info().home + "/Library/Application Support/LumeUnlock";
  }
  std::string probe_path() const { return support_dir() + "/bin/lume-unlock-probe"; }
  std::string plist_path() const {
    return guest.info().home + "/Library/LaunchAgents/dev.lume-unlock.probe-agent.plist";
  }

  /// The standard recipe: the probe agent, then `more_entries` (YAML list items) when given.
  void write_recipe(const std::string& more_entries = "") {
    std::ostringstream yaml;
    yaml << "source:\n  image: " << image_ref.str() << "\n"
         << "vm:\n  cpu: 2\n  memory: 4GB\n"
         << "shim:\n  profile:\n    apple_family_max: 1009\n    max_threadgroup_memory: 65536\n"
         << "enablement:\n"
         << "  - name: probe-agent\n"
         << "    program: " << probe_path() << "\n"
         << "    args: [\"--json\"]\n"
         << "    agent: true\n"
         << "    keep_alive: false\n"
         << more_entries;
    recipe = files / "recipe.yaml";
    ASSERT_TRUE(util::write_file_atomic(recipe, yaml.str(), 0644).ok());
  }

  /// `ssh vm1 -- WORDS` as the guest user (the connection flags before the "--").
  CliRun guest_run(const std::vector<std::string>& words) {
    std::vector<std::string> command = {"ssh",
                                        "vm1",
                                        "--ssh-port",
                                        std::to_string(ssh_port),
                                        "--ssh-user",
                                        guest.info().user,
                                        "--ssh-password-env",
                                        "LUME_UNLOCK_PIPELINE_TEST_PW",
                                        "--"};
    command.insert(command.end(), words.begin(), words.end());
    return cli(command, false);
  }

  CliRun cli(const std::vector<std::string>& command,
             bool with_connection = true,
             std::vector<std::string> global = {}) {
    std::vector<std::string> args = {
        "lume-unlock", "--lume-url", lume->url(), "--state-dir", state.path()};
    args.insert(args.end(), global.begin(), global.end());
    args.insert(args.end(), command.begin(), command.end());
    if (with_connection) {
      for (const std::string& a : {std::string("--ssh-port"),
                                   std::to_string(ssh_port),
                                   std::string("--ssh-user"),
                                   guest.info().user,
                                   std::string("--ssh-password-env"),
                                   std::string("LUME_UNLOCK_PIPELINE_TEST_PW")}) {
        args.push_back(a);
      }
    }
    return run_lume_unlock(std::vector<std::string>(args.begin() + 1, args.end()));
  }

  CliRun create(std::vector<std::string> extra = {}) {
    std::vector<std::string> command = {
        "create", "vm1", "--recipe", recipe, "--bundle", SHIM_BUNDLE_DIR, "--ssh-wait", "2"};
    command.insert(command.end(), extra.begin(), extra.end());
    return cli(command, true, {"--json"});
  }

  /// sha256 of the manifest bytes skopeo fetches: an independent digest.
  std::string skopeo_digest(const std::string& reference) const {
    auto run = run_command({"/bin/sh",
                            "-c",
                            "skopeo inspect \"$2\" --raw \"docker://$1\" | sha256sum",
                            "sh",
                            reference,
                            registry->skopeo_trust()});
    return "sha256:" + run.stdout_text.substr(0, 64);
  }
  /// The manifest bytes skopeo fetches (an independent client); empty when it fails.
  std::string skopeo_raw(const std::string& reference) const {
    auto run = run_command({"/bin/sh",
                            "-c",
                            "skopeo inspect \"$2\" --raw \"docker://$1\"",
                            "sh",
                            reference,
                            registry->skopeo_trust()});
    return run.exit_status == 0 ? run.stdout_text : std::string();
  }

#ifdef LLAMA_BENCH_SIM_BINARY
  /// What a recipe installs instead of the test copying it into guest-sim (a real image holds
  /// no llama.cpp): a release archive of the llama-bench stand-in with libMetalEmu.so and the
  /// composed replays (10.0x pp512, 12.0x tg128), and a model file, both on this host for
  /// `file:` sources. write_bench_recipe() adds the install: items.
  void prepare_llama_cpp_release() {
    namespace fs = std::filesystem;
    const fs::path release = files.path() + "/release/llama.cpp/bin";
    fs::create_directories(release / "llama-bench-replay");
    const fs::path built = LLAMA_BENCH_SIM_BINARY;
    fs::copy_file(built, release / "llama-bench", fs::copy_options::overwrite_existing);
    fs::copy_file(LLAMA_PERPLEXITY_SIM_BINARY,
                  release / "llama-perplexity",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(built.parent_path() / "libMetalEmu.so",
                  release / "libMetalEmu.so",
                  fs::copy_options::overwrite_existing);
    const std::string replays = std::string(LUME_UNLOCK_FIXTURES) + "/llama-bench/";
    write_file(release / "llama-bench-replay/stock.json", slurp(replays + "guest-stock.json"));
    write_file(release / "llama-bench-replay/unlocked.json",
               slurp(replays + "guest-unlocked.json"));
    const auto tar = run_command({"/bin/tar",
                                  "-czf",
                                  files.path() + "/llama.tar.gz",
                                  "-C",
                                  files.path() + "/release",
                                  "llama.cpp"});
    ASSERT_EQ(tar.exit_status, 0) << tar.stderr_text;
    write_file(files.path() + "/composed 1B.gguf", "GGUF not really a model");
    llama_bench = guest.info().home + "/llama.cpp/bin/llama-bench";
    llama_perplexity = guest.info().home + "/llama.cpp/bin/llama-perplexity";
    model = guest.info().home + "/models/composed 1B.gguf";
  }

  /// The recipe with the llama-bench and llama-perplexity entries enabled (the latter with
  /// `perplexity_env`, a YAML flow mapping, e.g. the stand-in's drift control), the release and
  /// the model installed, and `bench:` set to the model and `bench` (YAML flow mapping entries,
  /// e.g. "min_speedup: 5").
  void write_bench_recipe(const std::string& bench, const std::string& perplexity_env = "") {
    std::string yaml = slurp(recipe);
    yaml += "  - name: llama-bench\n    program: " + llama_bench + "\n    agent: false\n";
    yaml += "  - name: llama-perplexity\n    program: " + llama_perplexity +
            "\n    agent: false\n" +
            (perplexity_env.empty() ? "" : "    env: " + perplexity_env + "\n");
    // Absolute host paths: a test may move the recipe (acceptance_test.cpp).
    yaml += "install:\n  - {file: \"" + files.path() + "/llama.tar.gz\", unpack: tar.gz, " +
            "strip_components: 1, dest: \"" + guest.info().home + "/llama.cpp\"}\n  - {file: \"" +
            files.path() + "/composed 1B.gguf\", dest: \"" + model + "\"}\n";
    yaml += "bench: {model: \"" + model + "\"" + (bench.empty() ? "" : ", " + bench) + "}\n";
    write_file(recipe, yaml, 0644);
  }

  std::string llama_bench;
  std::string llama_perplexity;
  std::string model;
#endif

  bool guest_has(const std::string& path) const {
    return ::access(path.c_str(), F_OK) == 0;
  }
  /// Files under the guest's support directory whose names mark them temporary or staged.
  std::string leftovers() const {
    return run_command({"/bin/sh",
                        "-c",
                        "find \"$1\" \"$2\" -name '*.tmp' -o -name 'payload-*' 2>/dev/null",
                        "sh",
                        support_dir(),
                        guest.info().home + "/Library/LaunchAgents"})
        .stdout_text;
  }

  TempDir files{"lume-unlock-pipeline"};
  TempDir state{"lume-unlock-state"};
  TempDir guest_dir{"guest-sim"};
  GuestSim guest{guest_dir.path()};
  std::unique_ptr<RegistryServer> registry;
  std::unique_ptr<LumeSim> lume;
  std::unique_ptr<DroppingProxy> proxy;
  int ssh_port = 0;
  /// lume-sim packs guest-sim's home into pushed images and restores it on pull (bake tests).
  bool guest_home_in_images = false;
  /// lume-sim's environment: push credentials, as `lume serve` needs them.
  std::map<std::string, std::string> lume_env{{"GITHUB_USERNAME", "lume-unlock-test"},
                                              {"GITHUB_TOKEN", "test-token-not-checked"}};
  oci::Reference image_ref;
  std::string image_digest;
  std::string recipe;
};

} // namespace lume_unlock::test

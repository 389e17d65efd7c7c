#pragma once

// The fixture of lume-sim's registry tests (lume_sim_registry_test.cpp,
// lume_sim_guest_home_test.cpp): a docker-registry on loopback, skopeo to look at it, lume-sim
// configured for it.
#include "raw_http.hpp"
#include "support/lume_image_seeder.hpp"
#include "support/lume_sim.hpp"
#include "support/registry_server.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace lume_sim_test {

using lume_unlock::test::LumeSim;
using lume_unlock::test::RegistryServer;
namespace oci = lume_unlock::oci;

const char* const k_skopeo = "/usr/bin/skopeo";

class LumeSimRegistryTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why_not;
    m_registry = RegistryServer::start(why_not);
    LUME_UNLOCK_REQUIRE(m_registry != nullptr, why_not);
    LUME_UNLOCK_REQUIRE(access(k_skopeo, X_OK) == 0,
                        "skopeo is not installed (run scripts/bootstrap)");
  }

  /// Seeds trycua/<name>:<tag> with 1 MiB chunks (several parts, a short last one).
  lume_unlock::test::SeededLumeImage seed(const std::string& repo_tag, std::uint32_t seed = 1) {
    oci::RegistryClient client(m_registry->client_options());
    lume_unlock::test::LumeImageSpec spec;
    spec.chunk_bytes = 1024 * 1024;
    spec.seed = seed;
    auto image = lume_unlock::test::seed_lume_image(
        client, oci::parse_reference(m_registry->host() + "/trycua/" + repo_tag).value(), spec);
    EXPECT_TRUE(image.ok()) << image.error().message();
    return image.value();
  }

  /// The manifest digest an independent client sees: sha256 of `skopeo inspect --raw`.
  std::string skopeo_digest(const std::string& repo_tag) {
    auto r = lume_unlock::test::run_command({k_skopeo,
                                             "inspect",
                                             "--raw",
                                             m_registry->skopeo_trust(),
                                             "docker://" + m_registry->host() + "/" + repo_tag});
    EXPECT_EQ(r.exit_status, 0) << r.stderr_text;
    return "sha256:" + lume_unlock::util::sha256_hex(r.stdout_text);
  }
  std::string skopeo_raw(const std::string& repo_tag) {
    return lume_unlock::test::run_command({k_skopeo,
                                           "inspect",
                                           "--raw",
                                           m_registry->skopeo_trust(),
                                           "docker://" + m_registry->host() + "/" + repo_tag})
        .stdout_text;
  }

  /// Waits for a push to land: the manifest under `repo_tag`, once its digest is not
  /// `not_digest`. Returns its bytes (empty, with a failure, when it never appears).
  std::string await_manifest(const std::string& repo_tag, const std::string& not_digest = "") {
    for (int i = 0; i < 500; ++i) {
      const std::string bytes = skopeo_raw(repo_tag);
      if (!bytes.empty() && "sha256:" + lume_unlock::util::sha256_hex(bytes) != not_digest) {
        return bytes;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << repo_tag << " never appeared";
    return std::string();
  }

  /// lume-sim with the registry as config.yaml's, trusting its CA, and push credentials in its
  /// environment unless `env` says otherwise.
  std::unique_ptr<LumeSim> start_sim(std::vector<std::string> extra = {},
                                     std::map<std::string, std::string> env = k_credentials) {
    std::vector<std::string> args = {
        "--registry", m_registry->host(), "--registry-ca", m_registry->ca_file()};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<LumeSim>(LUME_SIM_BINARY, args, env);
  }

  static inline const std::map<std::string, std::string> k_credentials = {
      {"GITHUB_USERNAME", "lume-sim-test"}, {"GITHUB_TOKEN", "not-checked"}};
  /// Every credential variable Lume reads, empty (as good as unset, also under CI).
  static inline const std::map<std::string, std::string> k_no_credentials = {
      {"GITHUB_USERNAME", ""}, {"GITHUB_TOKEN", ""}, {"GHCR_USERNAME", ""}, {"GHCR_TOKEN", ""}};

  /// Polls GET /lume/vms/NAME while it answers the pulling object; returns the last answer.
  static lume_sim_test::RawResponse
  await_pull(int port, const std::string& name, std::vector<double>* progress = nullptr) {
    lume_sim_test::RawResponse r;
    for (int i = 0; i < 1500; ++i) {
      r = raw(port, "GET", "/lume/vms/" + name);
      if (r.status != 200 || r.json_body().value("status", "") != "pulling") {
        return r;
      }
      if (progress != nullptr) {
        progress->push_back(r.json_body()["downloadProgress"].get<double>());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "pull of '" << name << "' never ended";
    return r;
  }

  std::unique_ptr<RegistryServer> m_registry;
};

} // namespace lume_sim_test

#define START(var, ...)                                                                            \
  auto var = start_sim(__VA_ARGS__);                                                               \
  LUME_UNLOCK_REQUIRE(var->started(), var->failure())

// The installed tool, as a user gets it: `cmake --install` into a temporary prefix, the prefix
// moved somewhere else, and the installed lume-unlock run from an unrelated directory against
// lume-sim and a loopback registry. It must find the shim bundle it was installed with.
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "support/lume_image_seeder.hpp"
#include "support/lume_sim.hpp"
#include "support/process.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <map>

namespace lume_unlock::test {
namespace {

using ::testing::HasSubstr;

class InstalledTool : public ::testing::Test {
protected:
  void SetUp() override {
    const CommandOutput installed =
        run_command({CMAKE_COMMAND, "--install", BUILD_DIR, "--prefix", dir / "prefix"});
    ASSERT_EQ(installed.exit_status, 0) << installed.stdout_text << installed.stderr_text;
    // Moved after installing, as a relocated prefix or an unpacked release archive is.
    std::filesystem::rename(dir / "prefix", prefix);
    std::filesystem::remove_all(dir / "prefix");
    std::filesystem::create_directories(dir / "elsewhere");

    std::string why;
    registry = RegistryServer::start(why);
    LUME_UNLOCK_REQUIRE(registry != nullptr, why);
    lume = std::make_unique<LumeSim>(LUME_SIM_BINARY);
    LUME_UNLOCK_REQUIRE(lume->started(), lume->failure());
    const std::string image = registry->host() + "/trycua/macos-tahoe-cua:latest";
    oci::RegistryClient client(registry->client_options());
    ASSERT_TRUE(seed_lume_image(client, oci::parse_reference(image).value()).ok());
    ASSERT_TRUE(util::write_file_atomic(dir / "r.yaml", "source: {image: " + image + "}\n").ok());
  }

  /// Runs the installed binary from `dir/elsewhere`, with no bundle named by the environment and
  /// the test registry's CA as the trust store (SSL_CERT_FILE).
  CommandOutput installed(std::vector<std::string> args) {
    args.insert(args.begin(),
                {prefix + "/bin/lume-unlock", "--lume-url", lume->url(), "--state-dir", dir / "s"});
    const std::string before = std::filesystem::current_path().string();
    EXPECT_EQ(::chdir((dir / "elsewhere").c_str()), 0);
    CommandOutput output =
        run_command(args, {{"LUME_UNLOCK_BUNDLE", ""}, {"SSL_CERT_FILE", registry->ca_file()}});
    EXPECT_EQ(::chdir(before.c_str()), 0);
    return output;
  }

  TempDir dir;
  const std::string prefix = dir / "moved";
  std::string bundle_dir = prefix + "/share/lume-unlock/shim-bundle";
  std::unique_ptr<RegistryServer> registry;
  std::unique_ptr<LumeSim> lume;
};

TEST_F(InstalledTool, DoctorNamesTheInstalledBundle) {
  const CommandOutput r = installed({"--json", "doctor", "--recipe", dir / "r.yaml"});
  const auto doc = nlohmann::json::parse(r.stdout_text);
  for (const auto& check : doc["checks"]) {
    if (check["name"] == "bundle") {
      EXPECT_NE(check["status"], "fail") << check;
      EXPECT_EQ(check["detail"].get<std::string>().rfind(bundle_dir + " (installed): version ", 0),
                0u)
          << check;
    }
    if (check["name"] == "lume" || check["name"] == "registry") {
      EXPECT_EQ(check["status"], "ok") << check;
    }
  }
}

TEST_F(InstalledTool, CreateDryRunPlansWithTheInstalledBundle) {
  const CommandOutput r = installed({"create", "vm1", "--recipe", dir / "r.yaml", "--dry-run"});
  ASSERT_EQ(r.exit_status, 0) << r.stdout_text << r.stderr_text;
  EXPECT_THAT(r.stdout_text, HasSubstr("[to do]    image:"));
  // The plan loaded and verified the installed bundle: its entry is named, its source too.
  EXPECT_EQ(r.stdout_text.rfind("create 'vm1' would run (dry run, nothing changed; bundle from "
                                "installed):\n",
                                0),
            0u)
      << r.stdout_text;
  EXPECT_THAT(r.stdout_text,
              HasSubstr("install-shim: install the bundle " + std::string(LUME_UNLOCK_VERSION) +
                        " entry for the guest (installed)"));
  EXPECT_FALSE(std::filesystem::exists(lume->home() + "/vm1")); // a dry run changes nothing
}

TEST_F(InstalledTool, VersionNamesTheBundleAndTheDigestOfItsBundleJson) {
  const CommandOutput r = installed({"--version"});
  ASSERT_EQ(r.exit_status, 0) << r.stderr_text;
  const std::string digest = util::sha256_file_hex(bundle_dir + "/bundle.json").value();
  EXPECT_THAT(r.stdout_text,
              HasSubstr("\nshim bundle " + bundle_dir +
                        " (installed): bundle.json sha256:" + digest + "\n"));
}

TEST_F(InstalledTool, InstallsTheToolAndNothingTestOnly) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(prefix)) {
    if (entry.is_regular_file()) {
      files.push_back(std::filesystem::relative(entry.path(), prefix).string());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> expected = {
      "bin/lume-unlock",
      "share/bash-completion/completions/lume-unlock",
      "share/doc/lume-unlock/LICENSE",
      "share/doc/lume-unlock/README.md",
      "share/doc/lume-unlock/report.schema.json",
      "share/lume-unlock/image-recipes/README.md",
      "share/lume-unlock/image-recipes/gemma4-12b.yaml",
      "share/lume-unlock/image-recipes/tahoe-llm.yaml",
      "share/lume-unlock/lume-unlock-shim-bundle-" + std::string(LUME_UNLOCK_VERSION) + ".tar.gz",
      "share/lume-unlock/perplexity-text.txt",
      "share/zsh/site-functions/_lume-unlock",
  };
  // The bundle's own files, as bundle.json lists them (its platforms depend on the build).
  std::vector<std::string> bundle;
  for (const auto& f : files) {
    if (f.rfind("share/lume-unlock/shim-bundle/", 0) == 0) {
      bundle.push_back(f);
    }
  }
  expected.insert(expected.end(), bundle.begin(), bundle.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(files, expected);
  const auto manifest = nlohmann::json::parse(util::read_file(bundle_dir + "/bundle.json").value());
  std::size_t listed = 1; // bundle.json itself
  for (const auto& [platform, entry] : manifest["platforms"].items()) {
    listed += 1 + (entry.contains("probe") ? 1 : 0) +
              entry.value("support", nlohmann::json::array()).size();
  }
  EXPECT_EQ(bundle.size(), listed) << "installed bundle files differ from bundle.json";
}

TEST_F(InstalledTool, InstallsTheMitLicenseOfTheSourceTree) {
  const std::string installed_license =
      util::read_file(prefix + "/share/doc/lume-unlock/LICENSE").value();
  EXPECT_EQ(installed_license,
            util::read_file(std::string(LUME_UNLOCK_SOURCE_DIR) + "/LICENSE").value());
  EXPECT_EQ(
      installed_license.rfind("MIT License\n\nCopyright (c) 2026 the lume-unlock authors\n", 0), 0U)
      << installed_license;
}

} // namespace
} // namespace lume_unlock::test

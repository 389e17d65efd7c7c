#include "pipeline/create.hpp"
#include "pipeline/remove.hpp"
#include "provenance/provenance.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::pipeline {
namespace {

lume::VmDetails vm_details() {
  lume::VmDetails vm;
  vm.name = "vm1";
  vm.cpu_count = 8;
  vm.memory_size = 16ULL << 30;
  return vm;
}

TEST(CreateProvenance, UnknownValuesStayAbsent) {
  CreateOptions options;
  options.vm = lume::VmName("vm1");
  recipe::Recipe recipe;
  CreateOutcome outcome; // nothing pulled, installed or probed
  guest::GuestFacts facts;
  facts.kernel = "Linux";
  const auto record = provenance::to_json(build_provenance(
      options, recipe, outcome, vm_details(), facts, {}, std::nullopt, "2026-12-02T18:00:00Z"));
  EXPECT_EQ(record,
            (nlohmann::json{{"schema", "lume-unlock/provenance/v1"},
                            {"vm", "vm1"},
                            {"hardware", {{"cpu", 8}, {"memory_bytes", 16ULL << 30}}},
                            {"guest", {{"os", "Linux"}}},
                            {"enablement", nlohmann::json::array()},
                            {"created_at", "2026-12-02T18:00:00Z"},
                            {"updated_at", "2026-12-02T18:00:00Z"}}));
}

TEST(CreateProvenance, AMacGuestWithEverythingKnownFillsEveryKey) {
  CreateOptions options;
  options.vm = lume::VmName("vm1");
  options.lume_url = "http://127.0.0.1:7777";
  options.recipe_path = "image-recipes/tahoe-llm.yaml";
  recipe::Recipe recipe;
  recipe.sha256 = std::string(64, 'e');
  CreateOutcome outcome;
  outcome.image = transfer::PulledImage{"ghcr.io/a/b:latest",
                                        oci::Digest::of_bytes("m"),
                                        oci::Digest::of_bytes("m").str(),
                                        true,
                                        std::nullopt};
  apply::ShimInstallReport shim;
  shim.installed.bundle_version = "0.1.0";
  shim.installed.platform = "darwin-arm64";
  shim.installed.shim = {"/Users/lume/x.dylib", std::string(64, 'a')};
  outcome.shim = shim;
  outcome.probe = apply::ProbeRun{{{"a", 1}}, {{"a", 2}}};
  guest::GuestFacts facts;
  facts.kernel = "Darwin";
  facts.machine = "arm64";
  facts.product_version = "26.5.2";
  facts.build_version = "25F84";
  provenance::Provenance previous;
  previous.vm = "vm1";
  previous.created_at = "2026-01-01T00:00:00Z";
  const auto record = provenance::to_json(
      build_provenance(options,
                       recipe,
                       outcome,
                       vm_details(),
                       facts,
                       {{"llama-server", "/opt/x", true, "ff", "recipe", std::nullopt}},
                       previous,
                       "2026-12-02T18:00:00Z"));
  for (const char* key : {"schema",
                          "vm",
                          "lume_url",
                          "image",
                          "hardware",
                          "guest",
                          "shim",
                          "enablement",
                          "probe",
                          "recipe",
                          "created_at",
                          "updated_at"}) {
    EXPECT_TRUE(record.contains(key)) << key;
  }
  EXPECT_EQ(record["guest"],
            (nlohmann::json{
                {"os", "macOS"}, {"version", "26.5.2"}, {"build", "25F84"}, {"arch", "arm64"}}));
  EXPECT_EQ(record["shim"]["profile"],
            (nlohmann::json{{"apple_family_max", 1009}, {"max_threadgroup_memory", 65536}}));
  EXPECT_EQ(record["created_at"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(record["updated_at"], "2026-12-02T18:00:00Z");
}

TEST(CreateProvenance, ABundleFromARegistryIsRecordedByReferenceAndDigest) {
  CreateOptions options;
  options.vm = lume::VmName("vm1");
  recipe::Recipe recipe;
  CreateOutcome outcome;
  apply::ShimInstallReport shim;
  shim.installed.bundle_version = "0.1.0";
  shim.installed.platform = "linux-x86_64";
  shim.installed.shim = {"/home/lume/x.so", std::string(64, 'a')};
  outcome.shim = shim;
  guest::GuestFacts facts;
  auto shim_record = [&] {
    return provenance::to_json(build_provenance(options,
                                                recipe,
                                                outcome,
                                                vm_details(),
                                                facts,
                                                {},
                                                std::nullopt,
                                                "2026-12-02T18:00:00Z"))["shim"];
  };
  // From a directory or archive: nothing to say about a registry, so the keys are absent.
  EXPECT_FALSE(shim_record().contains("bundle_reference"));
  EXPECT_FALSE(shim_record().contains("bundle_digest"));

  const oci::Digest digest = oci::Digest::of_bytes("bundle manifest");
  options.bundle_artifact =
      oci::parse_reference("127.0.0.1:5000/acme/shim:0.1.0@" + digest.str()).value();
  EXPECT_EQ(shim_record()["bundle_reference"], "127.0.0.1:5000/acme/shim@" + digest.str());
  EXPECT_EQ(shim_record()["bundle_digest"], digest.str());
  EXPECT_EQ(shim_record()["bundle_version"], "0.1.0");
}

TEST(CreateProvenance, SameProvenanceIgnoresOnlyTheTimestamps) {
  provenance::Provenance a;
  a.vm = "vm1";
  a.created_at = "2026-01-01T00:00:00Z";
  a.updated_at = "2026-01-01T00:00:00Z";
  provenance::Provenance b = a;
  b.updated_at = "2026-12-02T18:00:00Z";
  EXPECT_TRUE(same_provenance(a, b));
  b.lume_url = "http://127.0.0.1:7777";
  EXPECT_FALSE(same_provenance(a, b));
}

TEST(RemoveCommand, QuotesTheHomeAndBootsOutEveryAgentBeforeDeletingIt) {
  auto command = guest_cleanup_command("/Users/o'neil", 501);
  ASSERT_TRUE(command.ok());
  EXPECT_EQ(command.value(),
            "for f in '/Users/o'\\''neil/Library/LaunchAgents'/dev.lume-unlock.*.plist; do\n"
            "  [ -e \"$f\" ] || continue\n"
            "  n=${f##*/}; l=${n%.plist}\n"
            "  launchctl bootout gui/501/\"$l\" >/dev/null 2>&1\n"
            "  rm -f \"$f\" && printf 'removed %s\\n' \"$l\"\n"
            "done\n"
            "if [ -e '/Users/o'\\''neil/Library/Application Support/LumeUnlock' ] || [ -e "
            "'/Users/o'\\''neil/Library/Logs/LumeUnlock' ]; then echo present; fi\n"
            "rm -rf '/Users/o'\\''neil/Library/Application Support/LumeUnlock' "
            "'/Users/o'\\''neil/Library/Logs/LumeUnlock'\n");
}

} // namespace
} // namespace lume_unlock::pipeline

// The recipe's install: items from the host into guest-sim: staged through the real fetch
// (file sources) and unpack, streamed over SFTP, checked in the guest, recorded.
#include "apply/artifact_installer.hpp"
#include "apply/artifact_stage.hpp"
#include "integration/apply/apply_fixture.hpp"
#include "support/file_io.hpp"
#include "support/process.hpp"
#include "unit/macho/fixture.hpp"
#include "util/sha256.hpp"

#include <sys/stat.h>

#include <filesystem>

namespace lume_unlock::apply {
namespace {

namespace fs = std::filesystem;

class ArtifactInstall : public test::ApplyTest {
protected:
  void SetUp() override {
    test::ApplyTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) {
      return;
    }
    // A llama.cpp-like release: build/bin/{llama-server, llama-bench}, a library and a link to
    // it (as macOS release zips carry), a text file.
    const std::string tree = host.path() + "/tree/build";
    fs::create_directories(tree + "/bin");
    test::write_file(tree + "/bin/llama-server", test::macho_fixture("arm64"));
    test::write_file(tree + "/bin/llama-bench", "#!/bin/sh\necho bench\n");
    test::write_file(tree + "/bin/libggml.0.dylib", "library bytes");
    fs::create_symlink("libggml.0.dylib", tree + "/bin/libggml.dylib");
    test::write_file(tree + "/README.md", "read me\n");
    ::chmod((tree + "/bin/llama-server").c_str(), 0755);
    ::chmod((tree + "/bin/llama-bench").c_str(), 0755);
    const auto tar = test::run_command(
        {"/bin/tar", "-czf", host.path() + "/llama.tar.gz", "-C", host.path() + "/tree", "build"});
    ASSERT_EQ(tar.exit_status, 0) << tar.stderr_text;
    test::write_file(host.path() + "/model.gguf", std::string(300000, 'm'));

    recipe.path = host.path() + "/r.yaml";
    recipe::InstallItem llama;
    llama.field = "install[0]";
    llama.source = fetch::file_source(host.path() + "/llama.tar.gz");
    llama.unpack = fetch::UnpackFormat::tar_gz;
    llama.strip_components = 1;
    llama.dest = facts.home + "/llama.cpp";
    recipe::InstallItem model;
    model.field = "install[1]";
    model.source = fetch::file_source("model.gguf"); // relative to the recipe
    model.dest = facts.home + "/models/model.gguf";
    model.mode = 0640;
    recipe.install = {llama, model};
  }

  Result<std::vector<StagedArtifact>> stage() {
    staging.emplace(StagingArea::create(cache).value());
    return stage_artifacts(recipe, nullptr, cache, {http, nullptr, {}}, *staging);
  }

  Result<ArtifactInstallReport> install(const std::vector<StagedArtifact>& staged) {
    return install_artifacts(*session,
                             staged,
                             view().target.shim,
                             facts.home + "/Library/Application Support/LumeUnlock/staging",
                             [this](const util::ProgressEvent& e) { events.push_back(e); });
  }

  std::string guest_file(const std::string& relative) {
    return test::slurp(facts.home + "/" + relative);
  }

  test::TempDir host{"lume-unlock-artifacts"};
  fetch::BlobCache cache{host.path() + "/cache"};
  util::HttpClient http;
  std::optional<StagingArea> staging;
  recipe::Recipe recipe;
  std::vector<util::ProgressEvent> events;
};

TEST_F(ArtifactInstall, PutsEveryFileInPlaceRecordsItAndASecondRunSendsNothing) {
  auto staged = stage();
  ASSERT_TRUE(staged.ok()) << staged.error().message();
  ASSERT_EQ(staged.value().size(), 2u);
  EXPECT_EQ(staged.value()[0].files.size(), 5u);

  auto first = install(staged.value());
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_EQ(first.value().files_total, 6u);
  EXPECT_EQ(first.value().files_sent, 6u);
  // hash, writable check, mkdir of the scratch folder, the verify-and-install command.
  EXPECT_EQ(first.value().commands, 4u);
  EXPECT_EQ(guest_file("llama.cpp/bin/llama-server"), test::macho_fixture("arm64"));
  EXPECT_EQ(guest_file("llama.cpp/bin/libggml.dylib"), "library bytes") << "a link becomes a copy";
  EXPECT_EQ(guest_file("llama.cpp/README.md"), "read me\n");
  EXPECT_EQ(guest_file("models/model.gguf"), std::string(300000, 'm'));
  EXPECT_EQ(fs::status(facts.home + "/llama.cpp/bin/llama-bench").permissions() & fs::perms::all,
            fs::perms(0755));
  EXPECT_EQ(fs::status(facts.home + "/llama.cpp/README.md").permissions() & fs::perms::all,
            fs::perms(0644));
  EXPECT_EQ(fs::status(facts.home + "/models/model.gguf").permissions() & fs::perms::all,
            fs::perms(0640));
  EXPECT_FALSE(fs::exists(facts.home + "/Library/Application Support/LumeUnlock/staging") &&
               !fs::is_empty(facts.home + "/Library/Application Support/LumeUnlock/staging"))
      << "the scratch folder is removed";

  // The record: source, digest and size of the bytes fetched, each file with its digest, and
  // the Mach-O verdict of executables only.
  const auto& records = first.value().records;
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].source, host.path() + "/llama.tar.gz");
  EXPECT_EQ(records[0].sha256, util::sha256_file_hex(host.path() + "/llama.tar.gz").value());
  EXPECT_EQ(records[0].unpack, "tar.gz");
  EXPECT_EQ(records[1].unpack, "none");
  EXPECT_EQ(records[1].files.size(), 1u);
  EXPECT_EQ(records[1].files[0].path, facts.home + "/models/model.gguf");
  EXPECT_EQ(records[1].files[0].size, 300000u);
  EXPECT_FALSE(records[1].files[0].macho);
  std::map<std::string, std::optional<std::string>> verdicts;
  for (const auto& file : records[0].files) {
    verdicts[file.path.substr(facts.home.size() + 1)] = file.macho;
  }
  // guest-sim's shim is linux-x86_64: an arm64 Mach-O has no slice it can take.
  EXPECT_EQ(verdicts["llama.cpp/bin/llama-server"],
            std::optional<std::string>("wrong-architecture"));
  EXPECT_EQ(verdicts["llama.cpp/bin/llama-bench"], std::optional<std::string>("injectable"));
  EXPECT_EQ(verdicts["llama.cpp/README.md"], std::nullopt);
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(events.back().finished);
  EXPECT_EQ(events.back().unit, "bytes");
  EXPECT_EQ(events.back().done, events.back().total);

  // Unchanged: ONE command, nothing sent.
  auto second = install(staged.value());
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_EQ(second.value().files_sent, 0u);
  EXPECT_EQ(second.value().commands, 1u);
  ASSERT_EQ(second.value().records.size(), first.value().records.size());
  for (std::size_t i = 0; i < first.value().records.size(); ++i) {
    EXPECT_EQ(second.value().records[i].sha256, first.value().records[i].sha256);
    EXPECT_EQ(second.value().records[i].files.size(), first.value().records[i].files.size());
  }

  // One file changed in the guest: only it is sent again.
  test::write_file(facts.home + "/llama.cpp/README.md", "edited\n");
  auto repaired = install(staged.value());
  ASSERT_TRUE(repaired.ok()) << repaired.error().message();
  EXPECT_EQ(repaired.value().files_sent, 1u);
  EXPECT_EQ(repaired.value().bytes_sent, 8u);
  EXPECT_EQ(guest_file("llama.cpp/README.md"), "read me\n");
}

TEST_F(ArtifactInstall, AnUnwritableDestinationIsRefusedBeforeAnyByteIsSent) {
  const std::string locked = facts.home + "/locked";
  fs::create_directories(locked);
  recipe.install[0].dest = locked + "/llama.cpp";
  auto staged = stage();
  ASSERT_TRUE(staged.ok()) << staged.error().message();
  ::chmod(locked.c_str(), 0555);
  auto refused = install(staged.value());
  ::chmod(locked.c_str(), 0755);
  if (geteuid() == 0 && sim.info().user == "root") {
    GTEST_SKIP() << "a root guest user can write anywhere";
  }
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().category(), ErrorCategory::guest);
  EXPECT_EQ(refused.error().message(),
            "install[0]: installing into '" + locked +
                "/llama.cpp': the guest user cannot write to '" + locked + "'");
  EXPECT_NE(refused.error().hint().find("nothing was sent"), std::string::npos);
  EXPECT_FALSE(fs::exists(facts.home + "/models/model.gguf")) << "all or none";
  EXPECT_TRUE(events.empty()) << "no upload started";
}

TEST_F(ArtifactInstall, AnEnabledProgramTheArchiveLacksNamesWhatItHolds) {
  auto staged = stage();
  ASSERT_TRUE(staged.ok()) << staged.error().message();
  enablement::EnablementList list;
  list.entries.push_back(agent("llama-server", facts.home + "/llama.cpp/bin/llama-server"));
  EXPECT_TRUE(check_enabled_programs(staged.value(), list).ok());

  list.entries.push_back(agent("llama-cli", facts.home + "/llama.cpp/bin/llama-cli"));
  auto missing = check_enabled_programs(staged.value(), list);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().category(), ErrorCategory::usage);
  EXPECT_EQ(missing.error().message(),
            "enablement entry 'llama-cli': program '" + facts.home +
                "/llama.cpp/bin/llama-cli' is not in install[0] (" + host.path() +
                "/llama.tar.gz, unpacked to '" + facts.home +
                "/llama.cpp'), which holds 'bin/llama-bench', 'bin/llama-server', 'README.md', "
                "'bin/libggml.0.dylib', 'bin/libggml.dylib'");

  // Without strip_components the tree has build/bin/...: the hint says so.
  recipe.install[0].strip_components = 0;
  auto deeper = stage();
  ASSERT_TRUE(deeper.ok()) << deeper.error().message();
  list.entries.pop_back();
  auto unstripped = check_enabled_programs(deeper.value(), list);
  ASSERT_FALSE(unstripped.ok());
  EXPECT_EQ(unstripped.error().hint(),
            "the tree has it as 'build/bin/llama-server': set install[0].strip_components to drop "
            "the leading folder");
}

TEST_F(ArtifactInstall, ABrokenTransferChangesNothingInTheGuest) {
  auto staged = stage();
  ASSERT_TRUE(staged.ok()) << staged.error().message();
  // The host copy changes after it was hashed: the guest's check finds the mismatch.
  StagedArtifact& model = staged.value()[1];
  const std::string copy = host.path() + "/damaged.gguf";
  test::write_file(copy, std::string(300000, 'x'));
  model.files[0].host_path = copy;
  auto refused = install(staged.value());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().category(), ErrorCategory::verification);
  EXPECT_NE(refused.error().message().find("SHA-256 mismatch after extraction for '" + facts.home +
                                           "/models/model.gguf'"),
            std::string::npos)
      << refused.error().message();
  EXPECT_FALSE(fs::exists(facts.home + "/llama.cpp")) << "all or none";
  EXPECT_FALSE(fs::exists(facts.home + "/models/model.gguf"));
}

} // namespace
} // namespace lume_unlock::apply

// The recipe's install: items from the host into guest-sim: staged through the real fetch
// (file sources) and unpack, streamed over SFTP, checked in the guest, recorded.
#include "apply/artifact_installer.hpp"
#include "apply/artifact_stage.hpp"
#include "integration/apply/apply_fixture.hpp"
#include "support/file_io.hpp"
#include "support/llama_release.hpp"
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
    // llama.cpp's release as its workflow packs it: llama-b10167/ holding the programs, the
    // versioned libraries with their links, LICENSE.
    release = test::make_llama_release(host.path(),
                                       "b10167",
                                       {{"llama-server", test::macho_fixture("arm64")},
                                        {"llama-bench", "#!/bin/sh\necho bench\n"}});
    test::write_file(host.path() + "/model.gguf", std::string(300000, 'm'));

    recipe.path = host.path() + "/r.yaml";
    recipe::InstallItem llama;
    llama.field = "install[0]";
    llama.source = fetch::file_source(release.archive_path);
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
    return stage_artifacts(recipe, nullptr, cache, {http, nullptr, {}, {}, {}}, *staging);
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
  test::LlamaRelease release;
  fetch::BlobCache cache{host.path() + "/cache"};
  util::HttpClient http;
  std::optional<StagingArea> staging;
  recipe::Recipe recipe;
  std::vector<util::ProgressEvent> events;
};

TEST_F(ArtifactInstall, PutsEveryFileInPlaceRecordsItAndASecondRunSendsNothing) {
  auto staged = stage();
  ASSERT_TRUE(staged.ok()) << staged.error().message();
  ASSERT_EQ(staged.value()[0].files.size(), release.files.size() + release.links.size());
  const std::size_t tree = staged.value()[0].files.size();

  auto first = install(staged.value());
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_EQ(first.value().files_total, tree + 1);
  EXPECT_EQ(first.value().files_sent, tree + 1);
  // Links cross no bytes: what was sent is the regular files and the model.
  std::uint64_t file_bytes = 300000;
  for (const auto& [path, bytes] : release.files) {
    file_bytes += bytes.size();
  }
  EXPECT_EQ(first.value().bytes_sent, file_bytes);
  // hash, writable check, mkdir of the scratch folder, the verify-and-install command.
  EXPECT_EQ(first.value().commands, 4u);
  EXPECT_EQ(guest_file("llama.cpp/llama-server"), test::macho_fixture("arm64"));
  EXPECT_EQ(guest_file("llama.cpp/LICENSE"), release.files.at("LICENSE"));
  for (const auto& [path, target] : release.links) {
    const fs::path guest = facts.home + "/llama.cpp/" + path;
    ASSERT_TRUE(fs::is_symlink(guest)) << path << " arrives as a link, as tar and dyld expect";
    EXPECT_EQ(fs::read_symlink(guest).string(), target);
  }
  EXPECT_EQ(guest_file("llama.cpp/libllama.dylib"), release.files.at("libllama.0.0.10167.dylib"))
      << "the chain libllama.dylib -> libllama.0.dylib -> the versioned file resolves";
  EXPECT_EQ(guest_file("models/model.gguf"), std::string(300000, 'm'));
  EXPECT_EQ(fs::status(facts.home + "/llama.cpp/llama-bench").permissions() & fs::perms::all,
            fs::perms(0755));
  EXPECT_EQ(fs::status(facts.home + "/llama.cpp/LICENSE").permissions() & fs::perms::all,
            fs::perms(0644));
  EXPECT_EQ(fs::status(facts.home + "/models/model.gguf").permissions() & fs::perms::all,
            fs::perms(0640));
  EXPECT_FALSE(fs::exists(facts.home + "/Library/Application Support/LumeUnlock/staging") &&
               !fs::is_empty(facts.home + "/Library/Application Support/LumeUnlock/staging"))
      << "the scratch folder is removed";

  // The record: source, digest and size of the bytes fetched, each file with its digest and
  // the Mach-O verdict of executables only, each link with its target.
  const auto& records = first.value().records;
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].source, release.archive_path);
  EXPECT_EQ(records[0].sha256, util::sha256_file_hex(release.archive_path).value());
  EXPECT_EQ(records[0].unpack, "tar.gz");
  EXPECT_EQ(records[1].unpack, "none");
  EXPECT_EQ(records[1].files.size(), 1u);
  EXPECT_EQ(records[1].files[0].path, facts.home + "/models/model.gguf");
  EXPECT_EQ(records[1].files[0].size, 300000u);
  EXPECT_FALSE(records[1].files[0].macho);
  std::map<std::string, provenance::ArtifactFile> recorded;
  for (const auto& file : records[0].files) {
    recorded[file.path.substr(facts.home.size() + 1)] = file;
  }
  // guest-sim's shim is linux-x86_64: an arm64 Mach-O has no slice it can take.
  EXPECT_EQ(recorded["llama.cpp/llama-server"].macho,
            std::optional<std::string>("wrong-architecture"));
  EXPECT_EQ(recorded["llama.cpp/llama-bench"].macho, std::optional<std::string>("injectable"));
  EXPECT_EQ(recorded["llama.cpp/LICENSE"].macho, std::nullopt);
  EXPECT_EQ(recorded["llama.cpp/libllama.0.dylib"].link,
            std::optional<std::string>("libllama.0.0.10167.dylib"));
  EXPECT_EQ(recorded["llama.cpp/libllama.0.dylib"].sha256, "");
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
    EXPECT_EQ(second.value().records[i], first.value().records[i]);
  }

  // One file changed and one link replaced by a copy of its bytes: only those two are sent
  // again, and the link is a link once more.
  test::write_file(facts.home + "/llama.cpp/LICENSE", "edited\n");
  const std::string link = facts.home + "/llama.cpp/libggml.0.dylib";
  fs::remove(link);
  test::write_file(link, release.files.at(release.links.at("libggml.0.dylib")));
  auto repaired = install(staged.value());
  ASSERT_TRUE(repaired.ok()) << repaired.error().message();
  EXPECT_EQ(repaired.value().files_sent, 2u);
  EXPECT_EQ(repaired.value().bytes_sent, release.files.at("LICENSE").size());
  EXPECT_EQ(guest_file("llama.cpp/LICENSE"), release.files.at("LICENSE"));
  EXPECT_TRUE(fs::is_symlink(link));
}

TEST_F(ArtifactInstall, APinnedFileOfTheArchiveIsCheckedBeforeAnyByteIsSent) {
  const std::string bench = util::sha256_hex(release.files.at("llama-bench"));
  recipe.install[0].file_sha256 = {{"llama-bench", bench}};
  auto pinned = stage();
  ASSERT_TRUE(pinned.ok()) << pinned.error().message();

  const std::string other(64, 'a');
  recipe.install[0].file_sha256 = {{"llama-bench", other}};
  auto wrong = stage();
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().category(), ErrorCategory::registry);
  EXPECT_EQ(wrong.error().message(),
            "install[0].files.llama-bench (" + release.archive_path + "): its SHA-256 is " + bench +
                ", the recipe pins " + other);
  EXPECT_NE(wrong.error().hint().find("nothing was sent to the guest"), std::string::npos);

  recipe.install[0].file_sha256 = {{"libllama.0.dylib", other}};
  auto link = stage();
  ASSERT_FALSE(link.ok());
  EXPECT_NE(link.error().message().find("it is a link to 'libllama.0.0.10167.dylib', not a file"),
            std::string::npos)
      << link.error().message();

  recipe.install[0].file_sha256 = {{"bin/llama-bench", bench}};
  auto missing = stage();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("the archive holds no such file"), std::string::npos);
  EXPECT_FALSE(fs::exists(facts.home + "/llama.cpp")) << "nothing reached the guest";
}

TEST_F(ArtifactInstall, ALinkThatLeavesTheDestinationIsRefused) {
  const std::string bin = host.path() + "/escape/build/bin";
  fs::create_directories(bin);
  test::write_file(bin + "/llama-server", "program", 0755);
  // Not "../…": the workflow's -s substitution also rewrites link targets, so a leading "."
  // would become "llama-b1.".
  fs::create_symlink("lib/../../../.ssh/authorized_keys", bin + "/libllama.0.dylib");
  const auto packed = test::run_command({"/usr/bin/env",
                                         "bsdtar",
                                         "-czf",
                                         host.path() + "/escape.tar.gz",
                                         "-s",
                                         ",^\\.,llama-b1,",
                                         "-C",
                                         bin,
                                         "."});
  ASSERT_EQ(packed.exit_status, 0) << packed.stderr_text;
  recipe.install[0].source = fetch::file_source(host.path() + "/escape.tar.gz");
  auto refused = stage();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().category(), ErrorCategory::verification);
  EXPECT_NE(refused.error().message().find("libllama.0.dylib"), std::string::npos)
      << refused.error().message();
  EXPECT_FALSE(fs::exists(facts.home + "/llama.cpp"));
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
  list.entries.push_back(agent("llama-server", facts.home + "/llama.cpp/llama-server"));
  EXPECT_TRUE(check_enabled_programs(staged.value(), list).ok());

  list.entries.push_back(agent("llama-cli", facts.home + "/llama.cpp/llama-cli"));
  auto missing = check_enabled_programs(staged.value(), list);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().category(), ErrorCategory::usage);
  EXPECT_EQ(missing.error().message(),
            "enablement entry 'llama-cli': program '" + facts.home +
                "/llama.cpp/llama-cli' is not in install[0] (" + release.archive_path +
                ", unpacked to '" + facts.home +
                "/llama.cpp'), which holds 'llama-bench', 'llama-server', 'LICENSE', "
                "'libggml-base.0.21.0.dylib', 'libggml-blas.0.21.0.dylib', "
                "'libggml-cpu.0.21.0.dylib', 'libggml-metal.0.21.0.dylib', "
                "'libggml-rpc.0.21.0.dylib' (and 16 more)");

  // Without strip_components the tree has llama-b10167/...: the hint says so.
  recipe.install[0].strip_components = 0;
  auto deeper = stage();
  ASSERT_TRUE(deeper.ok()) << deeper.error().message();
  list.entries.pop_back();
  auto unstripped = check_enabled_programs(deeper.value(), list);
  ASSERT_FALSE(unstripped.ok());
  EXPECT_EQ(unstripped.error().hint(),
            "the tree has it as 'llama-b10167/llama-server': set install[0].strip_components to "
            "drop the leading folder");
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

// install_payload against guest-sim: one archive, one upload, one extract+verify+install command.
#include "guest/payload.hpp"
#include "integration/apply/sim_guest.hpp"
#include "support/file_io.hpp"
#include "support/temp_dir.hpp"
#include "util/archive.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace lume_unlock::guest {
namespace {

namespace fs = std::filesystem;
using test::mode_of;
using test::slurp;

class Payload : public test::SimGuestTest {
protected:
  std::string root() const { return facts.home + "/Library/Application Support/LumeUnlock"; }
  std::string scratch() const { return root() + "/staging"; }
  /// Entries left in the scratch directory (payload-* directories and archives).
  std::vector<std::string> leftovers() const {
    std::vector<std::string> names;
    if (fs::exists(scratch())) {
      for (const auto& entry : fs::directory_iterator(scratch())) {
        names.push_back(entry.path().filename().string());
      }
    }
    return names;
  }
  std::vector<PayloadFile> three_files() const {
    return {
        PayloadFile::bytes(root() + "/bin/tool", "#!/bin/sh\necho tool\n", 0755),
        PayloadFile::bytes(root() + "/a dir/it's \"quoted\" $(x) & <y>.txt", "new quoted\n"),
        PayloadFile::bytes(root() + "/shim/abc/lib.so",
                           std::string("\0\x01"
                                       "binary\xff",
                                       9) /* split: \x01b would be one escape */),
    };
  }
};

TEST_F(Payload, InstallsEveryFileWithItsModeInTwoCommandsAndLeavesNoScratch) {
  guest_sh("mkdir -p " + std::string("'") + scratch() + "'");
  const auto files = three_files();
  const std::uint64_t before = session->command_count();
  auto report = install_payload(*session, files, scratch());
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(session->command_count() - before, 2u);
  EXPECT_EQ(report.value().commands, 2u);
  EXPECT_EQ(report.value().files, 3u);
  for (const PayloadFile& file : files) {
    EXPECT_EQ(slurp(file.path), file.content) << file.path;
    EXPECT_EQ(mode_of(file.path), file.mode) << file.path;
  }
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

TEST_F(Payload, CreatesTheScratchRootWithOneMoreCommand) {
  auto report = install_payload(*session, three_files(), scratch());
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(report.value().commands, 3u);
}

TEST_F(Payload, ReplacesExistingFilesAndReadsLocalSources) {
  const auto files = three_files();
  ASSERT_TRUE(install_payload(*session, files, scratch()).ok());
  test::TempDir local;
  ASSERT_TRUE(util::write_file_atomic(local / "src", "from a local file\n", 0644).ok());
  auto report = install_payload(
      *session, {PayloadFile::file(files[0].path, local / "src", {}, 0700)}, scratch());
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(slurp(files[0].path), "from a local file\n");
  EXPECT_EQ(mode_of(files[0].path), 0700u);
  EXPECT_EQ(slurp(files[1].path), files[1].content);
}

TEST_F(Payload, CorruptedUploadChangesNothingAndLeavesNoScratch) {
  auto files = three_files();
  ASSERT_TRUE(install_payload(*session, files, scratch()).ok());
  test::UnreliableSession unreliable(connect());
  unreliable.damage_upload = [](std::string bytes) {
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
    return bytes;
  };
  std::vector<PayloadFile> next = files;
  for (PayloadFile& file : next) {
    file.content = "next " + file.content;
  }
  auto report = install_payload(unreliable, next, scratch());
  ASSERT_FALSE(report.ok());
  EXPECT_TRUE(report.error().category() == ErrorCategory::guest ||
              report.error().category() == ErrorCategory::verification)
      << report.error().message();
  EXPECT_EQ(report.error().what_failed(), "installing 3 files in the guest");
  for (const PayloadFile& file : files) {
    EXPECT_EQ(slurp(file.path), file.content) << file.path;
  }
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

TEST_F(Payload, FileThatDoesNotMatchItsDigestIsNamedAndNothingChanges) {
  auto files = three_files();
  ASSERT_TRUE(install_payload(*session, files, scratch()).ok());
  test::TempDir work;
  test::UnreliableSession unreliable(connect());
  // Re-pack the archive with one byte of files/1 changed (SHA256SUMS and install.sh kept): the
  // archive is valid, only the per-file check can notice.
  unreliable.damage_upload = [&work](std::string bytes) {
    const std::string archive = work / "in.tar.gz";
    EXPECT_TRUE(util::write_file_atomic(archive, bytes, 0600).ok());
    EXPECT_TRUE(util::safe_extract(archive, work / "x").ok());
    std::string changed = test::slurp(work / "x/files/1");
    changed[0] = 'N';
    std::vector<util::TarEntry> entries;
    for (const std::string name : {"files/0", "files/2", "SHA256SUMS", "install.sh"}) {
      entries.push_back(
          util::TarEntry::bytes(name, test::slurp(work / ("x/" + std::string(name)))));
    }
    entries.push_back(util::TarEntry::bytes("files/1", changed));
    return util::tar_gz_bytes(entries).value();
  };
  std::vector<PayloadFile> next = files;
  for (PayloadFile& file : next) {
    file.content = "next " + file.content;
  }
  auto report = install_payload(unreliable, next, scratch());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().category(), ErrorCategory::verification);
  EXPECT_EQ(report.error().message(),
            "installing 3 files in the guest: SHA-256 mismatch after extraction for '" +
                files[1].path + "'");
  for (const PayloadFile& file : files) {
    EXPECT_EQ(slurp(file.path), file.content) << file.path;
  }
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

TEST_F(Payload, FailedMoveMidwayPutsEarlierFilesBack) {
  const std::string old_path = root() + "/old.txt";
  const std::string new_path = root() + "/new.txt";
  const std::string blocked = root() + "/locked/c.txt";
  guest_sh("mkdir -p '" + root() + "/locked' && printf old > '" + old_path + "' && chmod 0555 '" +
           root() + "/locked'");
  std::vector<PayloadFile> files = {PayloadFile::bytes(old_path, "replaced"),
                                    PayloadFile::bytes(new_path, "created"),
                                    PayloadFile::bytes(blocked, "c")};
  auto report = install_payload(*session, files, scratch());
  guest_sh("chmod 0755 '" + root() + "/locked'");
  if (geteuid() != 0 && fs::exists(blocked)) {
    GTEST_SKIP() << "this user can write into a 0555 directory";
  }
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().category(), ErrorCategory::guest);
  EXPECT_EQ(report.error().what_failed(), "installing 3 files in the guest");
  EXPECT_EQ(report.error().why().rfind("cannot install '" + blocked + "': ", 0), 0u)
      << report.error().why();
  EXPECT_EQ(
      report.error().hint(),
      "the previous files were put back; check the path's permissions in the guest and retry");
  EXPECT_EQ(slurp(old_path), "old");
  EXPECT_FALSE(fs::exists(new_path));
  EXPECT_FALSE(fs::exists(blocked));
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

TEST_F(Payload, LinksAreMadeInPlaceReplaceFilesAndComeBackOnRollback) {
  const std::string lib = root() + "/lib/libllama.0.0.1.dylib";
  const std::string link = root() + "/lib/libllama.0.dylib";
  const std::string was_file = root() + "/lib/libggml.0.dylib";
  guest_sh("mkdir -p '" + root() + "/lib' && printf copy > '" + was_file + "'");
  const auto linked = PayloadFile::link(link, "libllama.0.0.1.dylib");
  const auto replaces = PayloadFile::link(was_file, "libllama.0.0.1.dylib");
  auto report = install_payload(
      *session, {PayloadFile::bytes(lib, "dylib", 0755), linked, replaces}, scratch());
  ASSERT_TRUE(report.ok()) << report.error().message();
  ASSERT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link).string(), "libllama.0.0.1.dylib");
  EXPECT_EQ(slurp(link), "dylib");
  ASSERT_TRUE(fs::is_symlink(was_file)) << "a copy where the release has a link becomes the link";

  // A link pointing elsewhere, then a failure later in the same install: the first link is
  // put back as it was (a link with its old target, not a copy of what it led to).
  const std::string blocked = root() + "/locked/c.txt";
  guest_sh("mkdir -p '" + root() + "/locked' && chmod 0555 '" + root() + "/locked'");
  const auto moved = PayloadFile::link(link, "elsewhere.dylib");
  auto failed = install_payload(*session, {moved, PayloadFile::bytes(blocked, "c")}, scratch());
  guest_sh("chmod 0755 '" + root() + "/locked'");
  if (geteuid() != 0 && fs::exists(blocked)) {
    GTEST_SKIP() << "this user can write into a 0555 directory";
  }
  ASSERT_FALSE(failed.ok());
  ASSERT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link).string(), "libllama.0.0.1.dylib");
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

TEST_F(Payload, RelativeOrDuplicatePathsAreRefusedBeforeAnyCommand) {
  const std::uint64_t before = session->command_count();
  auto relative = install_payload(*session, {PayloadFile::bytes("rel/x", "x")}, scratch());
  ASSERT_FALSE(relative.ok());
  EXPECT_EQ(relative.error().message(),
            "installing 1 file in the guest: guest path 'rel/x' is not an absolute file path");
  auto twice = install_payload(
      *session, {PayloadFile::bytes("/tmp/x", "a"), PayloadFile::bytes("/tmp/x", "b")}, scratch());
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().message(),
            "installing 2 files in the guest: guest path '/tmp/x' is given twice");
  EXPECT_EQ(session->command_count(), before);
}

/// A model file of 300000 bytes for the streamed installs, and its payload entry.
PayloadFile streamed_model(const std::string& host_dir, const std::string& target) {
  const std::string model = host_dir + "/model.gguf";
  test::write_file(model, std::string(300000, 'm'));
  return PayloadFile::file(target, model, util::sha256_file_hex(model).value(), 0640);
}

TEST_F(Payload, StreamedFilesArriveWhole) {
  {
    auto opts = options();
    opts.stream_min_bytes = 0; // every file through an exec channel
    auto streaming = SshSession::connect(opts);
    ASSERT_TRUE(streaming.ok()) << streaming.error().message();
    test::TempDir host("lume-unlock-streamed");
    const std::string target = root() + "/models/it's a model.gguf";
    const PayloadFile file = streamed_model(host.path(), target);
    auto report = install_streamed_payload(*streaming.value(), {file}, scratch());
    ASSERT_TRUE(report.ok()) << report.error().message();
    EXPECT_EQ(report.value().commands, 2u);
    EXPECT_EQ(report.value().archive_bytes, 300000u);
    EXPECT_EQ(streaming.value()->stream_transfer_count(), 1u);
    EXPECT_EQ(slurp(target), std::string(300000, 'm'));
    EXPECT_EQ(mode_of(target), 0640u);
    EXPECT_TRUE(leftovers().empty());
    fs::remove(target);
  }
}

TEST_F(Payload, AStreamedFileThatArrivesWrongChangesNothing) {
  {
    auto opts = options();
    opts.stream_min_bytes = 0;
    auto streaming = SshSession::connect(opts);
    ASSERT_TRUE(streaming.ok()) << streaming.error().message();
    test::TempDir host("lume-unlock-streamed");
    const std::string target = root() + "/models/model.gguf";
    const PayloadFile file = streamed_model(host.path(), target);
    // The host copy changes after it was hashed: what the guest receives is not what was pinned.
    test::write_file(file.source_path, std::string(300000, 'x'));
    auto refused = install_streamed_payload(*streaming.value(), {file}, scratch());
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().category(), ErrorCategory::verification);
    // Compared by the install command, before anything moves.
    EXPECT_EQ(refused.error().message(),
              "installing 1 file in the guest: SHA-256 mismatch after extraction for '" + target +
                  "'");
    EXPECT_EQ(refused.error().hint(), "nothing was changed; the transfer was damaged: retry");
    EXPECT_FALSE(fs::exists(target));
    EXPECT_TRUE(leftovers().empty());
  }
}

} // namespace
} // namespace lume_unlock::guest

// lume-sim's --guest-home archive (guest_home_archive.hpp): the home round-trips exactly, the
// bytes are deterministic and a standard tar, other disks are not taken for it, and unsafe or
// malformed archives are refused before the home changes.
#include "guest_home_archive.hpp"
#include "home_snapshot.hpp"
#include "support/file_io.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

using lume_sim::GuestHomeError;
using lume_sim::is_guest_home_archive;
using lume_sim::restore_guest_home;
using lume_sim::write_guest_home_archive;
using lume_sim_test::snapshot;
using lume_unlock::test::slurp;
using lume_unlock::test::TempDir;
using lume_unlock::test::write_file;
namespace fs = std::filesystem;

const char* const k_tar = "/usr/bin/tar";

/// Octal digits filling `width` bytes of `block` at `at`, the last one NUL.
void octal(std::string& block, std::size_t at, std::size_t width, unsigned long value) {
  for (std::size_t i = width - 1; i-- > 0; value >>= 3) {
    block[at + i] = static_cast<char>('0' + (value & 7));
  }
}

/// A hand-made ustar member (header and padded data), written here independently of the
/// simulator so the reader is tested against bytes it did not produce.
std::string member(const std::string& name,
                   char type,
                   const std::string& data = "",
                   const std::string& link = "",
                   unsigned mode = 0644) {
  std::string h(512, '\0');
  h.replace(0, name.size(), name);
  octal(h, 100, 8, mode);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, data.size());
  octal(h, 136, 12, 0);
  h[156] = type;
  h.replace(157, link.size(), link);
  h.replace(257, 6, std::string("ustar\0", 6));
  h.replace(263, 2, "00");
  h.replace(148, 8, 8, ' ');
  unsigned long sum = 0;
  for (unsigned char c : h) {
    sum += c;
  }
  octal(h, 148, 7, sum);
  return h + data + std::string((512 - data.size() % 512) % 512, '\0');
}

const std::string k_end(1024, '\0');

/// The simulator's marker (its global header and record), taken from an empty home's archive.
std::string marker() {
  TempDir dir("guest-home-marker");
  fs::create_directory(dir / "home");
  write_guest_home_archive(dir / "home", dir / "disk.img");
  const std::string bytes = slurp(dir / "disk.img");
  EXPECT_EQ(bytes.size(), 1024u + 1024u) << "marker blocks and the end blocks";
  return bytes.substr(0, 1024);
}

TEST(GuestHomeArchive, RoundTripRestoresContentsModesAndSymlinks) {
  TempDir dir("guest-home");
  const fs::path home = dir / "home";
  fs::create_directory(home);
  fs::permissions(home, static_cast<fs::perms>(0750));
  fs::create_directories(home / "bin");
  write_file(home / "bin" / "tool", "#!/bin/sh\necho tool\n", 0755);
  fs::create_directories(home / "docs" / "deep" / "nested");
  write_file(home / "docs" / "deep" / "nested" / "notes.txt", "nested notes\n", 0600);
  fs::create_directory_symlink("../..", home / "docs" / "deep" / "up");
  write_file(home / "file with space.txt", "spaced\n", 0640);
  write_file(home / ".hidden", "", 0644);
  fs::create_directory(home / "empty");
  fs::permissions(home / "empty", static_cast<fs::perms>(0700));
  fs::create_directory(home / "ro");
  write_file(home / "ro" / "kept", "read only\n", 0444);
  fs::permissions(home / "ro", static_cast<fs::perms>(0555));
  fs::create_symlink("docs/deep/nested/notes.txt", home / "link to notes");
  const std::string long_name(120, 'n');
  fs::create_directory(home / "long");
  write_file(home / "long" / long_name, "long name\n");
  fs::create_symlink("long/" + long_name, home / "long-link");
  std::string binary("\0\x01\xff binary", 10);
  write_file(home / "binary.bin", binary);
  ASSERT_EQ(mkfifo((home / "pipe").c_str(), 0600), 0);

  const std::size_t entries = write_guest_home_archive(home, dir / "disk.img");
  EXPECT_EQ(entries, 17u); // everything above but the FIFO
  ASSERT_TRUE(is_guest_home_archive(dir / "disk.img"));
  auto expected = snapshot(home);
  expected.erase("pipe");

  // A standard tar to an independent reader, names intact (long ones via pax).
  auto listing = lume_unlock::test::run_command({k_tar, "-tf", dir / "disk.img"});
  ASSERT_EQ(listing.exit_status, 0) << listing.stderr_text;
  EXPECT_THAT(listing.stdout_text, HasSubstr("file with space.txt\n"));
  EXPECT_THAT(listing.stdout_text, HasSubstr("long/" + long_name + "\n"));
  EXPECT_THAT(listing.stdout_text, Not(HasSubstr("pipe")));

  // The guest changes its home; the restore puts back exactly what was archived.
  write_file(home / "bin" / "tool", "changed\n", 0644);
  fs::remove(home / "file with space.txt");
  fs::remove(home / "link to notes");
  fs::create_symlink("bin/tool", home / "link to notes");
  fs::permissions(home / "ro", static_cast<fs::perms>(0755));
  write_file(home / "ro" / "added", "x");
  fs::create_directories(home / "new" / "dir");
  write_file(home / "new" / "dir" / "stray", "stray\n");
  fs::remove(home / "pipe");
  ASSERT_NE(snapshot(home), expected);

  ASSERT_TRUE(restore_guest_home(dir / "disk.img", home));
  EXPECT_EQ(snapshot(home), expected);
  struct stat st {};
  ASSERT_EQ(stat(home.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0750u) << "the home directory itself keeps its mode";
  fs::permissions(home / "ro", static_cast<fs::perms>(0755)); // so TempDir can clean up
}

TEST(GuestHomeArchive, SameHomeGivesSameBytes) {
  TempDir dir("guest-home");
  const fs::path home = dir / "home";
  fs::create_directories(home / "b" / "c");
  write_file(home / "a", "a\n", 0755);
  write_file(home / "b" / "c" / "d", "d\n");
  write_guest_home_archive(home, dir / "first.img");
  fs::last_write_time(home / "a", fs::file_time_type::clock::now() - std::chrono::hours(5));
  write_guest_home_archive(home, dir / "second.img");
  EXPECT_EQ(slurp(dir / "first.img"), slurp(dir / "second.img"));
  // Writing replaces the target (no temporary file is left behind).
  write_guest_home_archive(home, dir / "first.img");
  EXPECT_FALSE(fs::exists(dir / "first.img.lume-sim-tmp"));
}

TEST(GuestHomeArchive, OtherDisksAreNotTakenForAnArchiveAndLeaveTheHomeAlone) {
  TempDir dir("guest-home");
  const fs::path home = dir / "home";
  fs::create_directory(home);
  write_file(home / "keep", "keep me\n", 0600);
  const auto before = snapshot(home);
  std::string random(3 * 1024 * 1024 + 4321, '\0');
  for (std::size_t i = 0; i < random.size(); ++i) {
    random[i] = static_cast<char>((i * 2654435761u) >> 13);
  }
  std::string other_marker = member("lume-sim-guest-home", 'g', "22 LUMESIM.other=1xyz\n");
  const std::vector<std::pair<const char*, std::string>> disks = {
      {"arbitrary bytes (a seeded disk)", random},
      {"empty", ""},
      {"a plain tar", member("keep", '0', "not a home\n") + k_end},
      {"a different global header", other_marker + member("x", '0', "x") + k_end},
      {"the marker cut short", marker().substr(0, 520)},
  };
  for (const auto& [what, bytes] : disks) {
    std::ofstream(dir / "disk.img", std::ios::binary | std::ios::trunc) << bytes;
    EXPECT_FALSE(is_guest_home_archive(dir / "disk.img")) << what;
    EXPECT_FALSE(restore_guest_home(dir / "disk.img", home)) << what;
    EXPECT_EQ(snapshot(home), before) << what;
  }
  EXPECT_FALSE(restore_guest_home(dir / "missing.img", home));
  EXPECT_EQ(snapshot(home), before);
}

struct UnsafeArchive {
  const char* what;
  std::string body; ///< after the marker
  std::string message;
  bool libarchive_words = false; ///< `message` is the start: libarchive's wording varies
};

/// Archives restore_guest_home must refuse, each with the error it gives.
std::vector<UnsafeArchive> unsafe_archives() {
  std::string bad_checksum = member("x", '0', "x");
  bad_checksum[0] = 'y';
  return {
      {"climbs out", member("../evil", '0', "x") + k_end, "entry '../evil' has a '..' component"},
      {"climbs out later",
       member("a/", '5') + member("a/../../evil", '0', "x") + k_end,
       "entry 'a/../../evil' has a '..' component"},
      {"absolute path",
       member("/tmp/evil", '0', "x") + k_end,
       "entry '/tmp/evil' is an absolute path"},
      {"dot component",
       member("./x", '0', "x") + k_end,
       "entry './x' has an empty or '.' component"},
      {"absolute symlink",
       member("l", '2', "", "/etc") + k_end,
       "symlink 'l' -> '/etc' points to an absolute path"},
      {"symlink out of the home",
       member("a/", '5') + member("a/l", '2', "", "../../outside") + k_end,
       "symlink 'a/l' -> '../../outside' leads out of the home"},
      // Lexically inside, but through s -> "." the kernel climbs once more than the names say.
      {"'..' after a name",
       member("s", '2', "", ".") + member("x/", '5') + member("l", '2', "", "s/x/../..") + k_end,
       "symlink 'l' -> 's/x/../..' has a '..' after a name"},
      {"write through a symlink",
       member("d/", '5') + member("l", '2', "", "d") + member("l/evil", '0', "x") + k_end,
       "entry 'l/evil' does not follow a directory entry for 'l'"},
      {"parent not listed",
       member("nodir/x", '0', "x") + k_end,
       "entry 'nodir/x' does not follow a directory entry for 'nodir'"},
      {"duplicate",
       member("x", '0', "1") + member("x", '0', "2") + k_end,
       "entry 'x' appears twice"},
      {"hard link", member("h", '1', "", "keep") + k_end, "entry 'h' has unsupported type '1'"},
      // libarchive takes a directory's size as 0 (docs/sources.md): its data reads as a header.
      {"directory with data",
       member("d/", '5', "data") + k_end,
       "malformed archive: Damaged tar archive",
       true},
      {"bad checksum", bad_checksum + k_end, "malformed archive: Damaged tar archive", true},
      {"data cut off",
       member("x", '0', std::string(2000, 'x')).substr(0, 1024) + k_end,
       "malformed archive: Truncated input file (needed 2048 bytes, only 1536 available)",
       true},
      {"no end blocks",
       member("x", '0', "x"),
       "the archive ends without its end-of-archive blocks"},
      {"a pax path climbs out",
       member("PaxHeader", 'x', "16 path=../evil\n") + member("x", '0', "x") + k_end,
       "entry '../evil' has a '..' component"},
  };
}

TEST(GuestHomeArchive, UnsafeOrMalformedArchivesAreRefusedBeforeTheHomeChanges) {
  TempDir dir("guest-home");
  const fs::path home = dir / "home";
  fs::create_directory(home);
  write_file(home / "keep", "keep me\n", 0600);
  const auto before = snapshot(home);
  const std::string head = marker();
  for (const auto& c : unsafe_archives()) {
    std::ofstream(dir / "disk.img", std::ios::binary | std::ios::trunc) << head << c.body;
    try {
      restore_guest_home(dir / "disk.img", home);
      ADD_FAILURE() << c.what << ": accepted";
    } catch (const GuestHomeError& e) {
      if (c.libarchive_words) {
        EXPECT_THAT(e.what(), StartsWith(c.message)) << c.what;
      } else {
        EXPECT_EQ(std::string(e.what()), c.message) << c.what;
      }
    }
    EXPECT_EQ(snapshot(home), before) << c.what;
  }
  // The same shapes written safely are accepted (the rules are not simply refusing everything).
  std::ofstream(dir / "disk.img", std::ios::binary | std::ios::trunc)
      << head << member("a/", '5') << member("a/l", '2', "", "../keep")
      << member("keep", '0', "new") << k_end;
  ASSERT_TRUE(restore_guest_home(dir / "disk.img", home));
  EXPECT_EQ(slurp(home / "a" / "l"), "new");
}

} // namespace

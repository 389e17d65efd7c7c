// lume-sim --guest-home through a real registry: the home travels in pushed images, seeded
// disks leave it alone, and an archive leading out of the home fails the pull
// (tests/sim/README.md).
#include "home_snapshot.hpp"
#include "lume_sim_registry_fixture.hpp"
#include "support/file_io.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

namespace {

using ::testing::HasSubstr;

using lume_sim_test::raw;
using lume_sim_test::snapshot;
using lume_unlock::test::LumeSim;
using lume_unlock::test::RegistryServer;
using lume_unlock::test::slurp;
using lume_unlock::test::write_file;
using nlohmann::json;
namespace fs = std::filesystem;
namespace oci = lume_unlock::oci;

using lume_sim_test::LumeSimRegistryTest;

TEST_F(LumeSimRegistryTest, GuestHomeTravelsInPushedImagesAndSeededDisksLeaveItAlone) {
  auto image = seed("macos-tahoe-cua:latest");
  lume_unlock::test::TempDir dir("lume-sim-guest-home");
  const fs::path home = dir / "home";
  fs::create_directories(home / "projects" / "deep");
  write_file(home / "run.sh", "#!/bin/sh\necho run\n", 0755);
  write_file(home / "projects" / "deep" / "notes.txt", "nested\n", 0600);
  write_file(home / "my notes.txt", "spaced\n", 0644);
  fs::create_symlink("projects/deep/notes.txt", home / "notes link");
  START(sim, {"--guest-home", home.string()});
  const std::string reg = m_registry->host();
  const fs::path vms = sim->home();
  auto pull = [&](const std::string& ref, const std::string& org, const std::string& name) {
    return raw(sim->port(),
               "POST",
               "/lume/pull",
               R"({"image":")" + ref + R"(","name":")" + name + R"(","organization":")" + org +
                   R"(","registry":")" + reg + R"("})");
  };

  // A seeded image's disk holds arbitrary bytes: pulling it leaves the home as it is.
  const auto original = snapshot(home);
  ASSERT_EQ(original.size(), 6u);
  ASSERT_EQ(pull("macos-tahoe-cua:latest", "trycua", "demo").status, 200);
  EXPECT_EQ(snapshot(home), original);
  EXPECT_EQ(slurp(vms / "demo" / "disk.img"), image.disk);

  // The push takes the home as it is when the request is answered.
  ASSERT_EQ(raw(sim->port(),
                "POST",
                "/lume/vms/push",
                R"({"name":"demo","imageName":"with-home","tags":["1"],"registry":")" + reg +
                    R"(","organization":"acme","chunkSizeMb":1})")
                .status,
            202);
  write_file(home / "run.sh", "#!/bin/sh\necho changed\n", 0644);
  fs::remove(home / "my notes.txt");
  fs::remove_all(home / "projects" / "deep");
  write_file(home / "stray file", "stray\n", 0600);
  ASSERT_NE(snapshot(home), original);
  ASSERT_FALSE(await_manifest("acme/with-home:1").empty());
  const std::string pushed_disk = slurp(vms / "demo" / "disk.img");
  EXPECT_NE(pushed_disk, image.disk);
  // The disk is a tar any tool can list.
  auto listing = lume_unlock::test::run_command({"/usr/bin/tar", "-tf", vms / "demo" / "disk.img"});
  EXPECT_EQ(listing.exit_status, 0) << listing.stderr_text;
  EXPECT_EQ(listing.stdout_text,
            "my notes.txt\nnotes link\nprojects/\nprojects/deep/\nprojects/deep/notes.txt\n"
            "run.sh\n");
  EXPECT_EQ(listing.stderr_text, "") << "the marker record is a vendor pax keyword tar ignores";

  // Pulled into another VM, the image brings the pushed home back exactly.
  auto back = pull("with-home:1", "acme", "restored");
  ASSERT_EQ(back.status, 200) << back.body;
  EXPECT_EQ(snapshot(home), original);
  EXPECT_EQ(slurp(vms / "restored" / "disk.img"), pushed_disk);
  EXPECT_THAT(
      sim->process().stderr_text(),
      HasSubstr("pull 'restored': guest home " + home.string() + " restored from disk.img"));

  // Changed again, the home survives a pull of a seeded image untouched.
  write_file(home / "run.sh", "after\n", 0700);
  const auto changed = snapshot(home);
  ASSERT_EQ(pull("macos-tahoe-cua:latest", "trycua", "plain").status, 200);
  EXPECT_EQ(snapshot(home), changed);
}

TEST_F(LumeSimRegistryTest, GuestHomeArchiveLeadingOutOfTheHomeFailsThePullAndLeavesNoVm) {
  seed("macos-tahoe-cua:latest");
  lume_unlock::test::TempDir dir("lume-sim-guest-home");
  const fs::path home = dir / "home";
  fs::create_directories(home);
  write_file(home / "keep", "keep\n", 0644);
  // Pushing archives any symlink; restoring refuses one that points out of the home.
  fs::create_symlink("/etc/hostname", home / "outside");
  START(sim, {"--guest-home", home.string()});
  const std::string reg = m_registry->host();
  ASSERT_EQ(raw(sim->port(),
                "POST",
                "/lume/pull",
                R"({"image":"macos-tahoe-cua:latest","name":"demo","registry":")" + reg + R"("})")
                .status,
            200);
  ASSERT_EQ(raw(sim->port(),
                "POST",
                "/lume/vms/push",
                R"({"name":"demo","imageName":"escape","tags":["1"],"registry":")" + reg +
                    R"(","organization":"acme"})")
                .status,
            202);
  ASSERT_FALSE(await_manifest("acme/escape:1").empty());
  fs::remove(home / "outside");
  const auto before = snapshot(home);

  auto r = raw(sim->port(),
               "POST",
               "/lume/pull",
               R"({"image":"escape:1","name":"back","organization":"acme","registry":")" + reg +
                   R"("})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(
      r.json_body()["message"],
      "lume-sim --guest-home: symlink 'outside' -> '/etc/hostname' points to an absolute path");
  EXPECT_FALSE(fs::exists(fs::path(sim->home()) / "back"));
  EXPECT_EQ(snapshot(home), before);
}

} // namespace

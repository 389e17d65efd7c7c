// lume-sim --guest-disks (tests/sim/README.md): every VM keeps its own guest. A stop saves the
// one simulated home onto the VM's disk, a run restores it, a clone copies it with the VM, so a
// clone starts as its source was and the two then differ, as two APFS clones of a disk do.
#include "home_snapshot.hpp"
#include "lume_sim_fixture.hpp"
#include "support/file_io.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace {

using lume_sim_test::LumeSimTest;
using lume_sim_test::raw;
using lume_sim_test::snapshot;
using lume_unlock::test::slurp;
using lume_unlock::test::write_file;
namespace fs = std::filesystem;

const char* const k_create_gold =
    R"({"name":"gold","os":"linux","cpu":2,"memory":"4GB","diskSize":"10GB","display":"1024x768"})";

TEST_F(LumeSimTest, GuestDisksGiveEveryVmItsOwnGuestAndACloneStartsAsItsSource) {
  lume_unlock::test::TempDir dir("lume-sim-guest-disks");
  const fs::path home = dir / "home";
  fs::create_directories(home / ".ssh");
  write_file(home / ".ssh" / "authorized_keys", "ssh-ed25519 AAAAgold lume-unlock@gold\n", 0600);
  START_SIM(sim,
            {"--create-delay-ms",
             "0",
             "--boot-delay-ms",
             "0",
             "--stop-delay-ms",
             "0",
             "--guest-home",
             home.string(),
             "--guest-disks"});
  const int port = sim->port();
  ASSERT_EQ(raw(port, "POST", "/lume/vms", k_create_gold).status, 202);
  await_status(port, "gold", "stopped");
  ASSERT_EQ(raw(port, "POST", "/lume/vms/gold/run", R"({"noDisplay":true})").status, 202);
  await_status(port, "gold", "running");
  write_file(home / "shim.dylib", "gold's shim\n", 0644);
  ASSERT_EQ(raw(port, "POST", "/lume/vms/gold/stop", "{}").status, 200);
  const auto gold = snapshot(home);
  EXPECT_TRUE(fs::exists(fs::path(sim->home()) / "gold" / "guest-home.tar"));

  // The clone carries gold's guest: running it restores exactly what gold's stop saved.
  ASSERT_EQ(raw(port, "POST", "/lume/vms/clone", R"({"name":"gold","newName":"work"})").status,
            200);
  fs::remove_all(home / ".ssh");
  ASSERT_EQ(raw(port, "POST", "/lume/vms/work/run", R"({"noDisplay":true})").status, 202);
  await_status(port, "work", "running");
  EXPECT_EQ(snapshot(home), gold);

  // One guest: gold cannot run beside work (logged, as Lume logs a failed background start).
  ASSERT_EQ(raw(port, "POST", "/lume/vms/gold/run", R"({"noDisplay":true})").status, 202);
  EXPECT_EQ(raw(port, "GET", "/lume/vms/gold").json_body()["status"], "stopped");

  // What the clone changes stays on the clone's disk.
  write_file(home / ".ssh" / "authorized_keys", "ssh-ed25519 AAAAwork lume-unlock@work\n", 0600);
  ASSERT_EQ(raw(port, "POST", "/lume/vms/work/stop", "{}").status, 200);
  const auto work = snapshot(home);
  ASSERT_NE(work, gold);
  ASSERT_EQ(raw(port, "POST", "/lume/vms/gold/run", R"({"noDisplay":true})").status, 202);
  await_status(port, "gold", "running");
  EXPECT_EQ(slurp(home / ".ssh" / "authorized_keys"), "ssh-ed25519 AAAAgold lume-unlock@gold\n");
  EXPECT_EQ(snapshot(home), gold);
}

} // namespace

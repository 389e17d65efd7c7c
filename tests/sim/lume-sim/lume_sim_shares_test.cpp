// lume-sim's sharedDirectories held to reference/lume-api.md §3.8 and to Lume's source at
// trycua/cua @ b296ec9c (docs/sources.md): Requests.swift RunVMRequest.parse() (validation
// before the 202, readOnly defaulting to false), VM.swift saveSessionData (the shares in
// sessions.json with the automount tag), VMVirtualizationService.swift createDirectoryShare
// (the names inside the guest's "/Volumes/My Shared Files"); and the --guest-share-root view.
#include "raw_http.hpp"
#include "support/file_io.hpp"
#include "support/lume_sim.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

namespace {

using lume_sim_test::raw;
using lume_unlock::test::LumeSim;
using lume_unlock::test::TempDir;
using nlohmann::json;
namespace fs = std::filesystem;

const char* const k_create =
    R"({"name":"dev","os":"linux","cpu":2,"memory":"4GB","diskSize":"10GB","display":"1024x768"})";

std::string status_of(int port) {
  auto r = raw(port, "GET", "/lume/vms/dev");
  return r.status == 200 ? r.json_body()["status"].get<std::string>() : "";
}

void await_stopped(int port) {
  for (int i = 0; i < 250 && status_of(port) != "stopped"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(status_of(port), "stopped");
}

std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

class LumeSimShares : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char* d : {"/a/models", "/b/models", "/c/.lume-live-share"}) {
      fs::create_directories(files.path() + d);
    }
    lume_unlock::test::write_file(files.path() + "/a/models/blob", "cached bytes");
    lume_unlock::test::write_file(files.path() + "/plain-file", "not a directory");
    view = files.path() + "/guest/Volumes/My Shared Files";
    fs::create_directories(view);
  }
  std::unique_ptr<LumeSim> start() {
    return std::make_unique<LumeSim>(
        LUME_SIM_BINARY,
        std::vector<std::string>{
            "--create-delay-ms", "0", "--stop-delay-ms", "0", "--guest-share-root", view});
  }
  TempDir files;
  std::string view;
};

TEST_F(LumeSimShares, BadSharedDirectoriesAre400BeforeTheVmStarts) {
  auto sim = start();
  LUME_UNLOCK_REQUIRE(sim->started(), sim->failure());
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms", k_create).status, 202);
  await_stopped(sim->port());
  const std::string a = files.path() + "/a/models";
  const std::vector<std::string> bodies = {
      R"({"noDisplay":true,"sharedDirectories":[{"hostPath":")" + files.path() + R"(/nowhere"}]})",
      R"({"noDisplay":true,"sharedDirectories":[{"hostPath":")" + files.path() +
          R"(/plain-file"}]})",
      R"({"noDisplay":true,"sharedDirectories":[{"readOnly":true}]})",
      R"({"noDisplay":true,"sharedDirectories":[{"hostPath":")" + a + R"(","readOnly":"yes"}]})",
      R"({"noDisplay":true,"sharedDirectories":{"hostPath":")" + a + R"("}})",
      // One good directory does not carry a bad one: all are checked before the 202.
      R"({"noDisplay":true,"sharedDirectories":[{"hostPath":")" + a + R"("},{"hostPath":")" +
          files.path() + R"(/nowhere"}]})",
  };
  for (const auto& body : bodies) {
    auto r = raw(sim->port(), "POST", "/lume/vms/dev/run", body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_TRUE(r.json_body().contains("message")) << r.body;
    EXPECT_EQ(status_of(sim->port()), "stopped") << "nothing started for " << body;
  }
  EXPECT_EQ(names_in(view), std::set<std::string>{}) << "the guest sees no share";
}

TEST_F(LumeSimShares, ARunKeepsItsSharesAndTheGuestSeesThemUnderLumesNames) {
  auto sim = start();
  LUME_UNLOCK_REQUIRE(sim->started(), sim->failure());
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms", k_create).status, 202);
  await_stopped(sim->port());
  const std::string a = files.path() + "/a/models";
  const std::string b = files.path() + "/b/models/"; // a trailing slash: the same last component
  const std::string c = files.path() + "/c/.lume-live-share";
  const std::string body = R"({"noDisplay":true,"sharedDirectories":[{"hostPath":")" + a +
                           R"(","readOnly":true},{"hostPath":")" + b + R"("},{"hostPath":")" + c +
                           R"(","readOnly":false}]})";
  auto r = raw(sim->port(), "POST", "/lume/vms/dev/run", body);
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(status_of(sim->port()), "running");

  // Recorded for the running VM as Lume writes sessions.json; the API still reports null.
  std::ifstream in(sim->home() + "/dev/sessions.json");
  const json session = json::parse(in);
  ASSERT_TRUE(session.contains("sharedDirectories")) << session.dump();
  const json& dirs = session["sharedDirectories"];
  ASSERT_EQ(dirs.size(), 3u);
  EXPECT_EQ(dirs[0],
            (json{{"hostPath", a}, {"tag", "com.apple.virtio-fs.automount"}, {"readOnly", true}}));
  EXPECT_EQ(dirs[1]["readOnly"], false) << "readOnly defaults to false";
  EXPECT_EQ(dirs[1]["hostPath"], b) << "kept as sent";
  EXPECT_TRUE(raw(sim->port(), "GET", "/lume/vms/dev").json_body()["sharedDirectories"].is_null());

  // The guest's view: the hidden placeholder first, then the last components, duplicates
  // suffixed in request order (the placeholder's name counts as taken).
  EXPECT_EQ(
      names_in(view),
      (std::set<std::string>{".lume-live-share", "models", "models (2)", ".lume-live-share (2)"}));
  EXPECT_EQ(lume_unlock::test::slurp(view + "/models/blob"), "cached bytes");
  if (geteuid() == 0) {
    // Read-only as on VirtioFS: the write fails, the host's folder is unchanged.
    FILE* f = std::fopen((view + "/models/new").c_str(), "w");
    const int err = errno;
    EXPECT_EQ(f, nullptr);
    EXPECT_EQ(err, EROFS);
    if (f != nullptr) {
      std::fclose(f);
    }
    EXPECT_FALSE(fs::exists(a + "/new"));
  } else {
    std::cout << "not root: the read-only view is a link, writes are not refused\n";
  }
  // A read-write share takes writes through to the host.
  lume_unlock::test::write_file(view + "/models (2)/written-by-guest", "x");
  EXPECT_TRUE(fs::exists(files.path() + "/b/models/written-by-guest"));

  // Stopped, the guest sees nothing and the host's folders are intact.
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms/dev/stop", "{}").status, 200);
  EXPECT_EQ(names_in(view), std::set<std::string>{});
  EXPECT_EQ(lume_unlock::test::slurp(a + "/blob"), "cached bytes");
}

TEST_F(LumeSimShares, LumeSimsExitTakesTheSharesOutOfTheGuest) {
  auto sim = start();
  LUME_UNLOCK_REQUIRE(sim->started(), sim->failure());
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms", k_create).status, 202);
  await_stopped(sim->port());
  const std::string body = R"({"noDisplay":true,"sharedDirectories":[{"hostPath":")" +
                           files.path() + R"(/a/models","readOnly":true}]})";
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms/dev/run", body).status, 202);
  ASSERT_TRUE(fs::exists(view + "/models/blob"));
  sim->stop();
  EXPECT_EQ(names_in(view), std::set<std::string>{}) << "no mount outlives lume-sim";
  EXPECT_EQ(lume_unlock::test::slurp(files.path() + "/a/models/blob"), "cached bytes");
}

} // namespace

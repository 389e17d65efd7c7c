// lume-sim's pull and push routes without a registry (reference/lume-api.md §3.11-§3.13): what
// they answer at once, and how a pull that cannot reach its registry fails.
#include "lume_sim_fixture.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <thread>

namespace {

using lume_sim_test::LumeSimTest;
using lume_sim_test::raw;
using nlohmann::json;

TEST_F(LumeSimTest, AsyncPullReportsProgressThenAStickyFailure) {
  START_SIM(sim, {"--pull-delay-ms", "1000"});
  auto r = raw(
      sim->port(), "POST", "/lume/pull/start", R"({"image":"macos-tahoe:latest","name":"base"})");
  EXPECT_EQ(r.status, 202);
  EXPECT_EQ(
      r.json_body(),
      json::parse(R"({"message":"Pull started","name":"base","image":"macos-tahoe:latest"})"));
  auto pulling = raw(sim->port(), "GET", "/lume/vms/base").json_body();
  EXPECT_EQ(pulling, json::parse(R"({"name":"base","status":"pulling","downloadProgress":0})"));
  for (int i = 0; i < 250 && raw(sim->port(), "GET", "/lume/vms/base").status == 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (int i = 0; i < 2; ++i) {
    auto failed = raw(sim->port(), "GET", "/lume/vms/base");
    EXPECT_EQ(failed.status, 400);
    EXPECT_EQ(
        failed.body,
        R"({"message":"Pull failed for 'base': Failed to fetch image manifest from registry."})");
  }
}

TEST_F(LumeSimTest, PullStartKeyIsTheImageNameWithoutName) {
  START_SIM(sim);
  auto r = raw(sim->port(), "POST", "/lume/pull/start", R"({"image":"macos-tahoe:latest"})");
  EXPECT_EQ(r.json_body()["name"], "macos-tahoe");
  EXPECT_EQ(raw(sim->port(), "GET", "/lume/vms/macos-tahoe").json_body()["status"], "pulling");
}

TEST_F(LumeSimTest, SyncPullFailsLikeLumeAndRejectsDigests) {
  START_SIM(sim);
  auto r =
      raw(sim->port(), "POST", "/lume/pull", R"({"image":"macos-tahoe:latest","name":"base"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, R"({"message":"Failed to fetch image manifest from registry."})");
  auto digest = raw(sim->port(), "POST", "/lume/pull", R"({"image":"a:b@sha256:00","name":"d"})");
  EXPECT_EQ(digest.body, R"({"message":"Invalid image format"})");
  EXPECT_EQ(raw(sim->port(), "POST", "/lume/pull", "{}").body,
            R"({"message":"Invalid request body"})");
}

TEST_F(LumeSimTest, PushIsAcceptedWith202) {
  START_SIM(sim);
  auto r = raw(sim->port(),
               "POST",
               "/lume/vms/push",
               R"({"name":"dev","imageName":"tahoe-unlocked","tags":["1","latest"]})");
  EXPECT_EQ(r.status, 202);
  EXPECT_EQ(r.json_body(), json::parse(R"({"message":"Push initiated in background","name":"dev",
      "imageName":"tahoe-unlocked","tags":["1","latest"]})"));
  EXPECT_EQ(raw(sim->port(), "POST", "/lume/vms/push", R"({"name":"dev"})").status, 400);
}

} // namespace

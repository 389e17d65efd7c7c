// lume-sim's run request held to Lume's source (docs/sources.md): on the main branch
// (trycua/cua ab957bdb7, Handlers.swift handleRunVM, Requests.swift parseVNCPolicy) a run body
// that does not decode is 400 and `"vnc":"disabled"` starts no VNC listener; with
// --lume-version 0.5.3 (tag lume-v0.5.3) the body is decoded with `try?` and `vnc` is ignored.
#include "lume_sim_fixture.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace {

using lume_sim_test::LumeSimTest;
using lume_sim_test::raw;
using lume_unlock::test::LumeSim;
using nlohmann::json;
using ::testing::StartsWith;

const char* const k_linux_create =
    R"({"name":"dev","os":"linux","cpu":2,"memory":"4GB","diskSize":"10GB","display":"1024x768"})";
// ValidationError's localizedDescription: swift-argument-parser's type is no LocalizedError.
const char* const k_validation_error =
    "{\"message\":\"The operation couldn\u2019t be completed. (ArgumentParser.ValidationError "
    "error 1.)\"}";

json session_of(const LumeSim& sim) {
  std::ifstream in(sim.home() + "/dev/sessions.json");
  return json::parse(in, nullptr, false);
}

class LumeSimVnc : public LumeSimTest {
protected:
  std::unique_ptr<LumeSim> stopped_vm(std::vector<std::string> args = {}) {
    args.insert(args.end(), {"--create-delay-ms", "0"});
    auto sim = start(args);
    if (sim->started()) {
      EXPECT_EQ(raw(sim->port(), "POST", "/lume/vms", k_linux_create).status, 202);
      await_status(sim->port(), "dev", "stopped");
    }
    return sim;
  }
};

TEST_F(LumeSimVnc, ADisabledVncRunHasNoUrlInDetailsOrSession) {
  auto sim = stopped_vm();
  LUME_UNLOCK_REQUIRE(sim->started(), sim->failure());
  auto r = raw(sim->port(), "POST", "/lume/vms/dev/run", R"({"noDisplay":true,"vnc":"disabled"})");
  ASSERT_EQ(r.status, 202) << r.body;
  const json details = raw(sim->port(), "GET", "/lume/vms/dev").json_body();
  EXPECT_EQ(details["status"], "running");
  EXPECT_TRUE(details["vncUrl"].is_null()) << details.dump();
  const json session = session_of(*sim);
  EXPECT_FALSE(session.contains("url")) << session.dump();
  EXPECT_EQ(session["vncEnabled"], false);
}

TEST_F(LumeSimVnc, WithoutTheKeyVncListensAsBefore) {
  auto sim = stopped_vm();
  LUME_UNLOCK_REQUIRE(sim->started(), sim->failure());
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms/dev/run", R"({"noDisplay":true})").status, 202);
  const json details = raw(sim->port(), "GET", "/lume/vms/dev").json_body();
  ASSERT_TRUE(details["vncUrl"].is_string()) << details.dump();
  EXPECT_THAT(details["vncUrl"].get<std::string>(), StartsWith("vnc://:"));
  EXPECT_EQ(session_of(*sim)["url"], details["vncUrl"]);
}

TEST_F(LumeSimVnc, RunWithVncDisabledNeedsNoDisplay) {
  START_SIM(sim);
  auto r = raw(sim->port(), "POST", "/lume/vms/dev/run", R"({"vnc":"disabled"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body,
            R"({"message":"VNC is disabled for this run, so '--display vnc' cannot be used."})");
}

const std::vector<std::string> k_undecodable = {
    "{bad",
    R"([true])",
    R"({"noDisplay":"yes"})",
    R"({"noDisplay":true,"vnc":5})",
    R"({"noDisplay":true,"sharedDirectories":{"hostPath":"/tmp"}})",
    R"({"noDisplay":true,"sharedDirectories":[{"readOnly":true}]})",
};

TEST_F(LumeSimVnc, ARunBodyThatDoesNotDecodeIs400AndStartsNothing) {
  auto sim = stopped_vm();
  LUME_UNLOCK_REQUIRE(sim->started(), sim->failure());
  for (const std::string& body : k_undecodable) {
    auto r = raw(sim->port(), "POST", "/lume/vms/dev/run", body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_EQ(r.body, k_validation_error) << body;
  }
  // A policy other than enabled/disabled decodes but fails parseVNCPolicy: 400 too.
  auto off = raw(sim->port(), "POST", "/lume/vms/dev/run", R"({"noDisplay":true,"vnc":"off"})");
  EXPECT_EQ(off.status, 400);
  EXPECT_EQ(off.body, k_validation_error);
  EXPECT_EQ(raw(sim->port(), "GET", "/lume/vms/dev").json_body()["status"], "stopped");
}

TEST_F(LumeSimVnc, Lume053IgnoresVncAndKeepsItsListener) {
  auto sim = stopped_vm({"--lume-version", "0.5.3"});
  LUME_UNLOCK_REQUIRE(sim->started(), sim->failure());
  auto r = raw(sim->port(), "POST", "/lume/vms/dev/run", R"({"noDisplay":true,"vnc":"disabled"})");
  ASSERT_EQ(r.status, 202) << r.body;
  const json details = raw(sim->port(), "GET", "/lume/vms/dev").json_body();
  ASSERT_TRUE(details["vncUrl"].is_string()) << details.dump();
  EXPECT_THAT(details["vncUrl"].get<std::string>(), StartsWith("vnc://:"));
  EXPECT_EQ(session_of(*sim)["url"], details["vncUrl"]);
}

TEST_F(LumeSimVnc, Lume053RunsWithEveryDefaultWhenTheBodyDoesNotDecode) {
  for (const std::string& body : k_undecodable) {
    auto sim = stopped_vm({"--lume-version", "0.5.3"});
    LUME_UNLOCK_REQUIRE(sim->started(), sim->failure());
    auto r = raw(sim->port(), "POST", "/lume/vms/dev/run", body);
    EXPECT_EQ(r.status, 202) << body << " -> " << r.body;
    const json details = raw(sim->port(), "GET", "/lume/vms/dev").json_body();
    EXPECT_EQ(details["status"], "running") << body;
    EXPECT_TRUE(details["vncUrl"].is_string()) << body;
  }
  // Not even the display conflict exists there: 0.5.3 knows no vnc policy.
  auto sim = stopped_vm({"--lume-version", "0.5.3"});
  LUME_UNLOCK_REQUIRE(sim->started(), sim->failure());
  EXPECT_EQ(raw(sim->port(), "POST", "/lume/vms/dev/run", R"({"vnc":"disabled"})").status, 202);
}

TEST_F(LumeSimVnc, AnUnknownLumeVersionIsRefusedAtStartup) {
  auto sim = start({"--lume-version", "0.4"});
  EXPECT_FALSE(sim->started());
}

} // namespace

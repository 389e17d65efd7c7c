// lume-sim held to reference/lume-api.md with raw HTTP (a plain socket, not our Lume client).
#include "lume_sim_fixture.hpp"
#include "options.hpp"
#include "support/loopback_listener.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace {

using ::testing::HasSubstr;

using lume_sim_test::raw;
using lume_sim_test::RawResponse;
using lume_unlock::test::LoopbackListener;
using lume_unlock::test::LumeSim;
using nlohmann::json;
namespace fs = std::filesystem;

const std::set<std::string> k_detail_keys = {"name",
                                             "os",
                                             "cpuCount",
                                             "memorySize",
                                             "diskSize",
                                             "display",
                                             "status",
                                             "provisioningOperation",
                                             "vncUrl",
                                             "ipAddress",
                                             "sshAvailable",
                                             "locationName",
                                             "sharedDirectories",
                                             "networkMode",
                                             "downloadProgress"};

std::set<std::string> keys_of(const json& j) {
  std::set<std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    out.insert(it.key());
  }
  return out;
}

const char* const k_linux_create =
    R"({"name":"dev","os":"linux","cpu":2,"memory":"4GB","diskSize":"10GB","display":"1024x768"})";

using lume_sim_test::LumeSimTest;

TEST_F(LumeSimTest, ListOfNoVmsIsAnEmptyJsonArray) {
  START_SIM(sim);
  auto r = raw(sim->port(), "GET", "/lume/vms");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(r.header("content-length"), "2");
  EXPECT_EQ(r.body, "[]");
}

TEST_F(LumeSimTest, QueryStringOnLiteralTerminatedRouteIsNotFound) {
  START_SIM(sim);
  const std::pair<std::string, std::string> cases[] = {
      {"GET", "/lume/vms?storage=x"},
      {"GET", "/lume/logs?type=info&lines=50"},
      {"GET", "/lume/images?organization=x"},
      {"POST", "/lume/vms/dev/run?x=y"},
      {"POST", "/lume/vms/dev/stop?storage=home"},
      {"GET", "/lume/vms/dev?storage=/Volumes/ssd"}, // an unencoded '/' adds pieces
  };
  for (const auto& [method, target] : cases) {
    auto r = raw(sim->port(), method, target, method == "POST" ? "{}" : "");
    EXPECT_EQ(r.status, 404) << method << " " << target;
    EXPECT_EQ(r.header("content-type"), "text/plain") << target;
    EXPECT_EQ(r.body, "Not found") << target;
  }
}

TEST_F(LumeSimTest, QueryStringOnNameTerminatedRouteIsRouted) {
  START_SIM(sim);
  auto r = raw(sim->port(), "GET", "/lume/vms/ghost?storage=home");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, R"({"message":"Virtual machine not found: ghost"})");
  auto encoded = raw(sim->port(), "GET", "/lume/vms/ghost?storage=%2Fnowhere%2Flume");
  EXPECT_EQ(encoded.status, 400);
}

TEST_F(LumeSimTest, UnknownRoutesAndWrongMethodsAreNotFoundNever405) {
  START_SIM(sim);
  const std::pair<std::string, std::string> cases[] = {
      {"PUT", "/lume/vms"},
      {"DELETE", "/lume/vms"},
      {"GET", "/lume/vms/dev/run"},
      {"GET", "/lume"},
      {"GET", "/"},
      {"OPTIONS", "/lume/vms"},
      {"GET", "/lume/vms/a/b/c/d"},
      {"POST", "/lume/host/status"},
      {"GET", "http://127.0.0.1/lume/vms"},
  };
  for (const auto& [method, target] : cases) {
    auto r = raw(sim->port(), method, target, method == "GET" ? "" : "{}");
    EXPECT_EQ(r.status, 404) << method << " " << target;
    EXPECT_EQ(r.body, "Not found") << method << " " << target;
  }
}

TEST_F(LumeSimTest, TrailingAndDoubledSlashesAreIgnored) {
  START_SIM(sim);
  EXPECT_EQ(raw(sim->port(), "GET", "/lume//vms/").status, 200);
  EXPECT_EQ(raw(sim->port(), "GET", "//lume/host/status").status, 200);
}

TEST_F(LumeSimTest, MissingVmIs400WithLumesMessage) {
  START_SIM(sim);
  const std::pair<std::string, std::string> cases[] = {
      {"GET", "/lume/vms/ghost"},
      {"DELETE", "/lume/vms/ghost"},
      {"PATCH", "/lume/vms/ghost"},
      {"POST", "/lume/vms/ghost/stop"},
  };
  for (const auto& [method, target] : cases) {
    auto r = raw(sim->port(), method, target, method == "GET" || method == "DELETE" ? "" : "{}");
    EXPECT_EQ(r.status, 400) << method << " " << target;
    EXPECT_EQ(r.header("content-type"), "application/json");
    EXPECT_EQ(r.body, R"({"message":"Virtual machine not found: ghost"})") << method;
  }
}

TEST_F(LumeSimTest, RunOfMissingVmIsAcceptedAndOnlyLogged) {
  START_SIM(sim);
  auto r = raw(sim->port(), "POST", "/lume/vms/ghost/run", R"({"noDisplay":true})");
  EXPECT_EQ(r.status, 202);
  EXPECT_EQ(r.json_body(),
            json::parse(R"({"message":"VM start initiated","name":"ghost","status":"pending"})"));
  EXPECT_EQ(raw(sim->port(), "GET", "/lume/vms/ghost").status, 400);
}

TEST_F(LumeSimTest, CreateAnswers202ThenProvisionsThenStops) {
  START_SIM(sim, {"--create-delay-ms", "1000"});
  auto r = raw(sim->port(), "POST", "/lume/vms", k_linux_create);
  EXPECT_EQ(r.status, 202);
  EXPECT_EQ(
      r.json_body(),
      json::parse(R"({"message":"VM creation started","name":"dev","status":"provisioning"})"));

  const fs::path dir = fs::path(sim->home()) / "dev";
  EXPECT_TRUE(fs::exists(dir / ".provisioning"));
  auto config = json::parse(std::ifstream(dir / "config.json"));
  EXPECT_EQ(keys_of(config),
            (std::set<std::string>{
                "os", "cpuCount", "memorySize", "diskSize", "display", "networkMode"}));
  EXPECT_EQ(config["memorySize"], 4ull << 30);
  EXPECT_EQ(config["diskSize"], 10ull << 30);
  auto marker = json::parse(std::ifstream(dir / ".provisioning"));
  EXPECT_EQ(marker["operation"], "ipsw_install");
  EXPECT_TRUE(marker["startedAt"].is_number_integer());

  auto provisioning = raw(sim->port(), "GET", "/lume/vms/dev").json_body();
  EXPECT_EQ(keys_of(provisioning), k_detail_keys);
  EXPECT_EQ(provisioning["status"], "provisioning");
  EXPECT_EQ(provisioning["provisioningOperation"], "ipsw_install");
  EXPECT_EQ(provisioning["diskSize"], json::parse(R"({"allocated":0,"total":10737418240})"));

  auto stopped = await_status(sim->port(), "dev", "stopped");
  EXPECT_EQ(keys_of(stopped), k_detail_keys);
  for (const char* key : {"provisioningOperation",
                          "vncUrl",
                          "ipAddress",
                          "sshAvailable",
                          "sharedDirectories",
                          "downloadProgress"}) {
    EXPECT_TRUE(stopped[key].is_null()) << key;
  }
  EXPECT_EQ(stopped["os"], "linux");
  EXPECT_EQ(stopped["cpuCount"], 2);
  EXPECT_EQ(stopped["memorySize"], 4ull << 30);
  EXPECT_EQ(stopped["locationName"], "home");
  EXPECT_EQ(stopped["networkMode"], "nat");
  EXPECT_FALSE(fs::exists(dir / ".provisioning"));
  EXPECT_TRUE(fs::exists(dir / "nvram.bin"));
  struct stat st {};
  ASSERT_EQ(::stat((dir / "disk.img").c_str(), &st), 0);
  EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), 10ull << 30);
  EXPECT_LT(static_cast<std::uint64_t>(st.st_blocks) * 512, 1ull << 20)
      << "disk.img must be sparse";
  auto final_config = json::parse(std::ifstream(dir / "config.json"));
  EXPECT_TRUE(final_config["macAddress"].is_string());

  auto again = raw(sim->port(), "POST", "/lume/vms", k_linux_create);
  EXPECT_EQ(again.status, 400);
  EXPECT_EQ(again.body, R"({"message":"Virtual machine already exists with name: dev"})");
}

TEST_F(LumeSimTest, StaleProvisioningMarkerIsReportedAsStale) {
  START_SIM(sim);
  const fs::path dir = fs::path(sim->home()) / "old";
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"os":"macos","display":"1024x768"})";
  std::ofstream(dir / ".provisioning") << R"({"operation":"ipsw_install","startedAt":1000})";
  auto d = raw(sim->port(), "GET", "/lume/vms/old").json_body();
  EXPECT_EQ(d["status"], "provisioning (stale)");
  EXPECT_EQ(d["cpuCount"], 0);
}

TEST_F(LumeSimTest, MalformedOrMistypedBodiesAreInvalidRequestBody) {
  START_SIM(sim);
  const std::string cases[] = {
      "{bad",
      "",
      R"({"name":"dev","os":"linux","cpu":"2","memory":"4GB","diskSize":"10GB","display":"1024x768"})",
      R"({"name":"dev","os":"linux","cpu":2,"memory":4,"diskSize":"10GB","display":"1024x768"})",
      R"({"os":"linux","cpu":2,"memory":"4GB","diskSize":"10GB","display":"1024x768"})",
  };
  for (const auto& body : cases) {
    auto r = raw(sim->port(), "POST", "/lume/vms", body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_EQ(r.body, R"({"message":"Invalid request body"})") << body;
  }
  EXPECT_FALSE(fs::exists(fs::path(sim->home()) / "dev"));
}

TEST_F(LumeSimTest, DeleteAnswers200WithAnEmptyBody) {
  START_SIM(sim, {"--create-delay-ms", "0"});
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms", k_linux_create).status, 202);
  await_status(sim->port(), "dev", "stopped");
  auto r = raw(sim->port(), "DELETE", "/lume/vms/dev");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-length"), "0");
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(r.body, "");
  EXPECT_FALSE(fs::exists(fs::path(sim->home()) / "dev"));
}

TEST_F(LumeSimTest, ForwardSlashesAreEscapedLikeFoundation) {
  START_SIM(sim, {"--create-delay-ms", "0"});
  auto config = raw(sim->port(), "GET", "/lume/config");
  EXPECT_EQ(config.status, 200);
  EXPECT_THAT(config.body, HasSubstr("\\/"));
  EXPECT_EQ(config.body.find_first_of(" \n"), std::string::npos) << "compact";
  for (std::size_t i = config.body.find('/'); i != std::string::npos;
       i = config.body.find('/', i + 1)) {
    EXPECT_EQ(config.body[i - 1], '\\') << config.body;
  }
  EXPECT_EQ(config.json_body()["vmLocations"][0]["path"], fs::absolute(sim->home()).string());

  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms", k_linux_create).status, 202);
  await_status(sim->port(), "dev", "stopped");
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms/dev/run", R"({"noDisplay":true})").status, 202);
  auto details = raw(sim->port(), "GET", "/lume/vms/dev");
  EXPECT_THAT(details.body, HasSubstr(R"("vncUrl":"vnc:\/\/:)"));
}

TEST_F(LumeSimTest, RunIsRunningAtOnceAndReportsTheGuestAfterTheBootDelay) {
  LoopbackListener sshd; // stands in for the guest's sshd
  START_SIM(sim,
            {"--create-delay-ms",
             "0",
             "--boot-delay-ms",
             "1000",
             "--guest-address",
             "127.0.0.1",
             "--guest-ssh-port",
             std::to_string(sshd.port())});
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms", k_linux_create).status, 202);
  await_status(sim->port(), "dev", "stopped");
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms/dev/run", R"({"noDisplay":true})").status, 202);
  auto booting = raw(sim->port(), "GET", "/lume/vms/dev").json_body();
  EXPECT_EQ(booting["status"], "running");
  EXPECT_TRUE(booting["ipAddress"].is_null());
  EXPECT_TRUE(booting["sshAvailable"].is_null());
  json booted = json::object();
  for (int i = 0; i < 250 && booted.value("ipAddress", json()).is_null(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    booted = raw(sim->port(), "GET", "/lume/vms/dev").json_body();
  }
  EXPECT_EQ(booted["ipAddress"], "127.0.0.1");
  EXPECT_EQ(booted["sshAvailable"], true);
  auto host = raw(sim->port(), "GET", "/lume/host/status").json_body();
  EXPECT_EQ(
      host,
      json::parse(
          R"({"status":"healthy","vm_count":1,"max_vms":2,"available_slots":1,"version":"1.0.0"})"));
}

TEST_F(LumeSimTest, SshAvailableIsFalseWhenNothingListensOnTheGuestPort) {
  const int closed_port = lume_unlock::test::free_loopback_port();
  START_SIM(sim,
            {"--create-delay-ms",
             "0",
             "--boot-delay-ms",
             "0",
             "--guest-address",
             "127.0.0.1",
             "--guest-ssh-port",
             std::to_string(closed_port)});
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms", k_linux_create).status, 202);
  await_status(sim->port(), "dev", "stopped");
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms/dev/run", R"({"noDisplay":true})").status, 202);
  auto d = raw(sim->port(), "GET", "/lume/vms/dev").json_body();
  EXPECT_EQ(d["ipAddress"], "127.0.0.1");
  EXPECT_EQ(d["sshAvailable"], false);
}

TEST_F(LumeSimTest, PatchChangesAStoppedVmAndRefusesARunningOne) {
  START_SIM(sim, {"--create-delay-ms", "0"});
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms", k_linux_create).status, 202);
  await_status(sim->port(), "dev", "stopped");
  auto empty = raw(sim->port(), "PATCH", "/lume/vms/dev", "");
  EXPECT_EQ(empty.body, R"({"message":"Invalid request body"})");
  auto ok = raw(
      sim->port(), "PATCH", "/lume/vms/dev", R"({"cpu":8,"memory":"16GB","display":"1440x900"})");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, R"({"message":"VM settings updated successfully"})");
  auto d = raw(sim->port(), "GET", "/lume/vms/dev").json_body();
  EXPECT_EQ(d["cpuCount"], 8);
  EXPECT_EQ(d["memorySize"], 16ull << 30);
  EXPECT_EQ(d["display"], "1440x900");

  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms/dev/run", R"({"noDisplay":true})").status, 202);
  auto cpu = raw(sim->port(), "PATCH", "/lume/vms/dev", R"({"cpu":4})");
  EXPECT_EQ(cpu.status, 400);
  EXPECT_EQ(cpu.body, R"({"message":"Virtual machine already running: dev"})");
  auto disk = raw(sim->port(), "PATCH", "/lume/vms/dev", R"({"diskSize":"20GB"})");
  EXPECT_EQ(disk.body, R"({"message":"Cannot modify dev: the VM is running. Stop it first."})");
  EXPECT_EQ(raw(sim->port(), "PATCH", "/lume/vms/dev", "{}").status, 200);
}

TEST_F(LumeSimTest, StopAnswers200AndRefusesAStoppedVm) {
  START_SIM(sim, {"--create-delay-ms", "0", "--stop-delay-ms", "50"});
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms", k_linux_create).status, 202);
  await_status(sim->port(), "dev", "stopped");
  auto not_running = raw(sim->port(), "POST", "/lume/vms/dev/stop", "{}");
  EXPECT_EQ(not_running.status, 400);
  EXPECT_EQ(not_running.body, R"({"message":"Virtual machine not running: dev"})");
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms/dev/run", "").status, 202);
  auto stop = raw(sim->port(), "POST", "/lume/vms/dev/stop", "");
  EXPECT_EQ(stop.status, 200);
  EXPECT_EQ(stop.body, R"({"message":"VM stopped successfully"})");
  EXPECT_EQ(raw(sim->port(), "GET", "/lume/vms/dev").json_body()["status"], "stopped");
}

TEST_F(LumeSimTest, NamesAreUsedVerbatimAsReferenceSection7Says) {
  START_SIM(sim, {"--create-delay-ms", "0"});
  auto create = [&](const std::string& name) {
    json body = json::parse(k_linux_create);
    body["name"] = name;
    return raw(sim->port(), "POST", "/lume/vms", body.dump());
  };
  // "img:tag" is created verbatim but looked up as "img_tag".
  EXPECT_EQ(create("img:tag").status, 202);
  auto colon = raw(sim->port(), "GET", "/lume/vms/img:tag");
  EXPECT_EQ(colon.body, R"({"message":"Virtual machine not found: img_tag"})");
  // Path parameters are not percent-decoded.
  EXPECT_EQ(create("my vm").status, 202);
  EXPECT_EQ(raw(sim->port(), "GET", "/lume/vms/my%20vm").body,
            R"({"message":"Virtual machine not found: my%20vm"})");
  // ".." resolves to an existing directory.
  EXPECT_EQ(create("..").body, R"({"message":"Virtual machine already exists with name: .."})");
  // '/' nests directories that the one-level list never shows.
  EXPECT_EQ(create("a/b").status, 202);
  EXPECT_TRUE(fs::exists(fs::path(sim->home()) / "a" / "b" / "config.json"));
  std::set<std::string> listed;
  for (const auto& vm : raw(sim->port(), "GET", "/lume/vms").json_body()) {
    listed.insert(vm["name"].get<std::string>());
  }
  EXPECT_EQ(listed, (std::set<std::string>{"img:tag", "my vm"}));
}

TEST_F(LumeSimTest, CloneCopiesWithANewMacAddress) {
  START_SIM(sim, {"--create-delay-ms", "0"});
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms", k_linux_create).status, 202);
  await_status(sim->port(), "dev", "stopped");
  auto r = raw(sim->port(), "POST", "/lume/vms/clone", R"({"name":"dev","newName":"dev2"})");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(
      r.json_body(),
      json::parse(R"({"message":"VM cloned successfully","source":"dev","destination":"dev2"})"));
  auto a = json::parse(std::ifstream(fs::path(sim->home()) / "dev" / "config.json"));
  auto b = json::parse(std::ifstream(fs::path(sim->home()) / "dev2" / "config.json"));
  EXPECT_NE(a["macAddress"], b["macAddress"]);
  struct stat st {};
  ASSERT_EQ(::stat((fs::path(sim->home()) / "dev2" / "disk.img").c_str(), &st), 0);
  EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), 10ull << 30);
  EXPECT_LT(static_cast<std::uint64_t>(st.st_blocks) * 512, 1ull << 20) << "the copy stays sparse";
  EXPECT_EQ(raw(sim->port(), "GET", "/lume/vms/dev2").json_body()["status"], "stopped");
  auto again = raw(sim->port(), "POST", "/lume/vms/clone", R"({"name":"dev","newName":"dev2"})");
  EXPECT_EQ(again.status, 400);
}

TEST_F(LumeSimTest, SmallRoutesAnswerTheReferenceShapes) {
  START_SIM(sim);
  EXPECT_EQ(raw(sim->port(), "GET", "/lume/images").body, "[]");
  EXPECT_EQ(
      raw(sim->port(), "GET", "/lume/host/status").json_body(),
      json::parse(
          R"({"status":"healthy","vm_count":0,"max_vms":2,"available_slots":2,"version":"1.0.0"})"));
  EXPECT_EQ(keys_of(raw(sim->port(), "GET", "/lume/logs").json_body()),
            (std::set<std::string>{"info", "error"}));
  EXPECT_EQ(raw(sim->port(), "POST", "/lume/prune", "").body,
            R"({"message":"Successfully removed cached images"})");
  auto config = raw(sim->port(), "GET", "/lume/config").json_body();
  EXPECT_EQ(config["defaultLocationName"], "home");
  EXPECT_EQ(raw(sim->port(), "POST", "/lume/vms/dev/setup", "").body,
            R"({"message":"Request body is required"})");
  EXPECT_EQ(raw(sim->port(), "POST", "/lume/vms/dev/setup", R"({"configPath":"tahoe"})").status,
            202);
}

TEST_F(LumeSimTest, InjectedFaultsAnswerInsteadOfTheRouteForNRequests) {
  START_SIM(sim, {"--fault", "GET /lume/vms=500x1", "--fault", R"(GET /lume/vms/x=200:{"name":)"});
  auto first = raw(sim->port(), "GET", "/lume/vms");
  EXPECT_EQ(first.status, 500);
  EXPECT_EQ(first.body, R"({"message":"lume-sim injected fault"})");
  EXPECT_EQ(raw(sim->port(), "GET", "/lume/vms").status, 200);
  auto raw_body = raw(sim->port(), "GET", "/lume/vms/x");
  EXPECT_EQ(raw_body.status, 200);
  EXPECT_EQ(raw_body.body, R"({"name":)");
}

TEST_F(LumeSimTest, DroppedRequestsGetNoAnswerAtAll) {
  START_SIM(sim, {"--drop", "GET /lume/vms=x1"});
  auto dropped = raw(sim->port(), "GET", "/lume/vms");
  EXPECT_EQ(dropped.status, 0);
  EXPECT_EQ(dropped.body, "");
  EXPECT_EQ(raw(sim->port(), "GET", "/lume/vms").status, 200);
}

TEST_F(LumeSimTest, BadFaultSpecificationsAreRejectedAtStartup) {
  const char* bad[] = {"GET /lume/vms", "GET=500", "GET /lume/vms=abc", "GET /lume/vms=999"};
  for (const char* spec : bad) {
    std::string error;
    EXPECT_FALSE(lume_sim::parse_fault(spec, error).has_value()) << spec;
    EXPECT_EQ(error, std::string("expected 'METHOD PATH=STATUS[xN][:BODY]', got '") + spec + "'");
  }
  std::string error;
  auto fault = lume_sim::parse_fault("POST /lume/vms/box3/run=503x2:{\"a\":1}", error);
  ASSERT_TRUE(fault.has_value()) << error;
  EXPECT_EQ(fault->method, "POST");
  EXPECT_EQ(fault->path, "/lume/vms/box3/run");
  EXPECT_EQ(fault->status, 503);
  EXPECT_EQ(fault->remaining, 2);
  EXPECT_EQ(fault->body, "{\"a\":1}");
  auto drop = lume_sim::parse_drop("GET /lume/vms/box3=x2", error);
  ASSERT_TRUE(drop.has_value()) << error;
  EXPECT_EQ(drop->path, "/lume/vms/box3");
  EXPECT_EQ(drop->remaining, 2);
}

} // namespace

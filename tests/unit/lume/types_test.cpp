#include "lume/types.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::lume {
namespace {

using nlohmann::json;

// A running VM as Lume 0.5.3 sends it (composed; reference §3.1), slashes escaped.
const char* const k_running =
    R"({"name":"dev","os":"macOS","cpuCount":4,"memorySize":8589934592,)"
    R"("diskSize":{"allocated":21474836480,"total":107374182400},"display":"1024x768",)"
    R"("status":"running","provisioningOperation":null,)"
    R"("vncUrl":"vnc:\/\/:amber-pilot-river-stone@127.0.0.1:58213","ipAddress":"192.168.64.9",)"
    R"("sshAvailable":true,"locationName":"home","sharedDirectories":null,"networkMode":"nat",)"
    R"("downloadProgress":null})";

TEST(VmDetailsJson, ReadsAllFifteenKeys) {
  auto d = vm_details_from_json(json::parse(k_running));
  ASSERT_TRUE(d.ok()) << d.error().message();
  const VmDetails& v = d.value();
  EXPECT_EQ(v.name, "dev");
  EXPECT_EQ(v.os, "macOS");
  EXPECT_EQ(v.cpu_count, 4u);
  EXPECT_EQ(v.memory_size, 8589934592u);
  EXPECT_EQ(v.disk_size, (DiskSize{21474836480u, 107374182400u}));
  EXPECT_EQ(v.display, "1024x768");
  EXPECT_EQ(v.status, VmStatus::running);
  EXPECT_EQ(v.status_text, "running");
  EXPECT_EQ(v.provisioning_operation, std::nullopt);
  EXPECT_EQ(v.vnc_url, "vnc://:amber-pilot-river-stone@127.0.0.1:58213");
  EXPECT_EQ(v.ip_address, "192.168.64.9");
  EXPECT_EQ(v.ssh_available, true);
  EXPECT_EQ(v.location_name, "home");
  EXPECT_FALSE(v.shared_directories.has_value());
  EXPECT_EQ(v.network_mode, "nat");
  EXPECT_FALSE(v.download_progress.has_value());
  EXPECT_TRUE(v.ssh_ready());
  EXPECT_EQ(describe(VmState(v)), "running (192.168.64.9, ssh open)");
}

TEST(VmDetailsJson, StatusStringsMapExactly) {
  const std::pair<std::string, VmStatus> cases[] = {
      {"provisioning", VmStatus::provisioning},
      {"provisioning (stale)", VmStatus::provisioning_stale},
      {"running", VmStatus::running},
      {"stopped", VmStatus::stopped},
      {"pulling", VmStatus::pulling},
      {"provisioning (ipsw_install)", VmStatus::other},
      {"starting", VmStatus::other},
  };
  for (const auto& [text, status] : cases) {
    json j = json::parse(k_running);
    j["status"] = text;
    auto d = vm_details_from_json(j);
    ASSERT_TRUE(d.ok()) << text;
    EXPECT_EQ(d.value().status, status) << text;
    EXPECT_EQ(d.value().status_text, text);
  }
}

TEST(VmDetailsJson, ToleratesUnknownKeysAndMissingOptionalKeys) {
  json j = json::parse(k_running);
  j["futureKey"] = {{"x", 1}};
  j.erase("vncUrl");
  j.erase("downloadProgress");
  j["sharedDirectories"] = json::array({{{"hostPath", "/x"}}});
  auto d = vm_details_from_json(j);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_FALSE(d.value().vnc_url.has_value());
  ASSERT_TRUE(d.value().shared_directories.has_value());
  EXPECT_EQ((*d.value().shared_directories)[0]["hostPath"], "/x");
}

TEST(VmDetailsJson, WrongTypesAndMissingKeysNameTheKey) {
  const std::pair<std::function<void(json&)>, std::string> cases[] = {
      {[](json& j) { j["cpuCount"] = "4"; },
       "/cpuCount: expected a non-negative integer, got a string"},
      {[](json& j) { j["cpuCount"] = -1; },
       "/cpuCount: expected a non-negative integer, got an integer"},
      {[](json& j) { j["memorySize"] = 1.5; },
       "/memorySize: expected a non-negative integer, got a fractional number"},
      {[](json& j) { j["diskSize"] = 5; }, "/diskSize: expected an object, got an integer"},
      {[](json& j) { j["diskSize"].erase("total"); },
       "/diskSize/total: missing (expected a non-negative integer)"},
      {[](json& j) { j["status"] = nullptr; }, "/status: expected a string, got null"},
      {[](json& j) { j.erase("name"); }, "/name: missing (expected a string)"},
      {[](json& j) { j["sshAvailable"] = "yes"; },
       "/sshAvailable: expected a boolean, got a string"},
      {[](json& j) { j["ipAddress"] = 7; }, "/ipAddress: expected a string, got an integer"},
      {[](json& j) { j["downloadProgress"] = "0"; },
       "/downloadProgress: expected a number, got a string"},
      {[](json& j) { j = json::array(); }, "/: expected an object, got an array"},
  };
  for (const auto& [mutate, why] : cases) {
    json j = json::parse(k_running);
    mutate(j);
    auto d = vm_details_from_json(j);
    ASSERT_FALSE(d.ok()) << why;
    EXPECT_EQ(d.error().why(), why);
    EXPECT_EQ(d.error().category(), ErrorCategory::lume_api);
  }
}

TEST(VmStateJson, PullingObjectHasThreeKeys) {
  auto s = vm_state_from_json(
      json::parse(R"({"name":"base","status":"pulling","downloadProgress":42.5})"));
  ASSERT_TRUE(s.ok()) << s.error().message();
  ASSERT_TRUE(std::holds_alternative<PullProgress>(s.value()));
  EXPECT_EQ(std::get<PullProgress>(s.value()).download_progress, 42.5);
  EXPECT_EQ(name_of(s.value()), "base");
  EXPECT_EQ(status_of(s.value()), VmStatus::pulling);
  EXPECT_EQ(describe(s.value()), "pulling 43%");
  auto zero =
      vm_state_from_json(json::parse(R"({"name":"b","status":"pulling","downloadProgress":0})"));
  EXPECT_EQ(std::get<PullProgress>(zero.value()).download_progress, 0);
}

TEST(VmStateJson, FullDetailsAreDetails) {
  auto s = vm_state_from_json(json::parse(k_running));
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(std::holds_alternative<VmDetails>(s.value()));
}

TEST(VmListJson, ReadsAnArrayAndNamesTheBadElement) {
  auto empty = vm_list_from_json(json::array());
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty.value().empty());
  json two = json::array({json::parse(k_running), json::parse(k_running)});
  two[1]["os"] = false;
  auto bad = vm_list_from_json(two);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().why(), "/1/os: expected a string, got a boolean");
}

TEST(SmallBodiesJson, HostStatusImagesAndConfig) {
  auto host = host_status_from_json(json::parse(
      R"({"status":"healthy","vm_count":1,"max_vms":2,"available_slots":1,"version":"1.0.0"})"));
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host.value().available_slots, 1u);
  auto images = images_from_json(
      json::parse(R"([{"repository":"macos-tahoe:latest","imageId":"0123456789ab"}])"));
  ASSERT_TRUE(images.ok());
  EXPECT_EQ(images.value()[0].image_id, "0123456789ab");
  auto config = config_from_json(json::parse(
      R"({"vmLocations":[{"name":"home","path":"~\/.lume"}],"defaultLocationName":"home",)"
      R"("cacheDirectory":"~\/.lume\/cache","cachingEnabled":false,"telemetryEnabled":true})"));
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config.value().vm_locations[0].path, "~/.lume");
  EXPECT_EQ(config.value().registry.registry, "ghcr.io") << "no registry block: the defaults";
  EXPECT_EQ(host_status_from_json(json::parse("{}")).error().why(),
            "/status: missing (expected a string)");
}

// lume-api.md §3.17: Settings.swift's registry block, as GET /lume/config shows it.
TEST(ResponseJson, ConfigReadsLumesRegistryBlockAndLogsBothTexts) {
  auto config = config_from_json(json::parse(
      R"({"vmLocations":[],"defaultLocationName":"home","cacheDirectory":"c","cachingEnabled":true,)"
      R"("registry":{"type":"ghcr","ghcr":{"registry":"registry.lan:5000","organization":"acme"}}})"));
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config.value().registry.type, "ghcr");
  EXPECT_EQ(config.value().registry.registry, "registry.lan:5000");
  EXPECT_EQ(config.value().registry.organization, "acme");
  auto gcs = config_from_json(json::parse(
      R"({"vmLocations":[],"defaultLocationName":"home","cacheDirectory":"c","cachingEnabled":true,)"
      R"("registry":{"type":"gcs","ghcr":{"registry":"ghcr.io","organization":"trycua"},)"
      R"("gcs":{"apiUrl":"https:\/\/x","apiKey":"k"}}})"));
  ASSERT_TRUE(gcs.ok()) << gcs.error().message();
  EXPECT_EQ(gcs.value().registry.type, "gcs");

  auto logs = logs_from_json(
      json::parse(R"({"info":"Info log file not found","error":"Error log file not found"})"));
  ASSERT_TRUE(logs.ok());
  EXPECT_EQ(logs.value().info, "Info log file not found");
  EXPECT_EQ(logs_from_json(json::parse(R"({"info":1,"error":""})")).ok(), false);
}

TEST(RequestJson, CreateWritesSizesAsLumeStrings) {
  CreateRequest r;
  r.name = "ci";
  r.cpu = 8;
  r.memory_bytes = 16ull << 30;
  r.disk_bytes = 80ull << 30;
  r.display = "1920x1080";
  r.ipsw = "latest";
  r.unattended = "tahoe";
  EXPECT_EQ(to_json(r), json::parse(R"({"name":"ci","os":"macOS","cpu":8,"memory":"16GB",
      "diskSize":"80GB","display":"1920x1080","ipsw":"latest","unattended":"tahoe"})"));
}

TEST(RequestJson, RunIsHeadlessWithoutVncByDefault) {
  EXPECT_EQ(to_json(RunOptions{}), json::parse(R"({"noDisplay":true,"vnc":"disabled"})"));
  RunOptions o;
  o.shared_directories = {{"/Users/me/work", true}};
  o.network = "bridged:en0";
  EXPECT_EQ(to_json(o), json::parse(R"({"noDisplay":true,"vnc":"disabled","network":"bridged:en0",
      "sharedDirectories":[{"hostPath":"/Users/me/work","readOnly":true}]})"));
}

TEST(RequestJson, RunKeepsLumesVncWhenAskedOrWithADisplay) {
  RunOptions keep;
  keep.vnc = true; // a recipe's vm.display: vnc: Lume's default, so the key is left out
  EXPECT_EQ(to_json(keep), json::parse(R"({"noDisplay":true})"));
  RunOptions shown;
  shown.no_display = false; // Lume refuses vnc "disabled" with a display (400)
  EXPECT_EQ(to_json(shown), json::parse(R"({"noDisplay":false})"));
}

TEST(RequestJson, PatchSendsOnlyWhatChanges) {
  EXPECT_EQ(to_json(PatchRequest{}), json::object());
  PatchRequest p;
  p.cpu = 8;
  p.memory_bytes = 16ull << 30;
  EXPECT_EQ(to_json(p), json::parse(R"({"cpu":8,"memory":"16GB"})"));
}

TEST(RequestJson, PullPushAndClone) {
  PullRequest pull;
  pull.image = "macos-tahoe:latest";
  pull.name = "base";
  pull.registry = "127.0.0.1:5000";
  EXPECT_EQ(
      to_json(pull),
      json::parse(R"({"image":"macos-tahoe:latest","name":"base","registry":"127.0.0.1:5000"})"));
  PushRequest push;
  push.name = "dev";
  push.image_name = "img";
  push.tags = {"1"};
  push.single_layer = true;
  EXPECT_EQ(to_json(push),
            json::parse(R"({"name":"dev","imageName":"img","tags":["1"],"singleLayer":true})"));
  CloneRequest clone;
  clone.name = "a";
  clone.new_name = "b";
  EXPECT_EQ(to_json(clone), json::parse(R"({"name":"a","newName":"b"})"));
}

} // namespace
} // namespace lume_unlock::lume

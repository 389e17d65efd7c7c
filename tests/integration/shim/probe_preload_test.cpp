// End to end on Linux: lume-unlock-probe over libMetalEmu, with and without the shim in
// LD_PRELOAD (DESIGN §4.1, §4.3, §4.5). Every run gets exactly the environment the test gives.
#include "probe/report.hpp"
#include "process_runner.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace lume_unlock::test {
namespace {

using Env = std::map<std::string, std::string>;
using nlohmann::json;

const std::string k_probe = LUME_UNLOCK_TEST_PROBE;
const std::string k_shim = LUME_UNLOCK_TEST_SHIM;
const std::string k_emu = LUME_UNLOCK_TEST_EMU;
const std::string k_driver = LUME_UNLOCK_TEST_DRIVER;
const std::string k_emu_without_init = LUME_UNLOCK_TEST_EMU_WITHOUT_INIT;
const std::string k_emu_without_base = LUME_UNLOCK_TEST_EMU_WITHOUT_BASE;

Env shimmed(Env env) {
  env["LD_PRELOAD"] = k_shim;
  return env;
}

ProcessResult probe(const Env& env, const std::vector<std::string>& args = {"--json"}) {
  std::vector<std::string> argv{k_probe};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, env);
}

json families(long apple_max, long common_max) {
  json f = json::object();
  for (long code : probe::probe_family_codes()) {
    const bool yes = (code >= 1001 && code <= apple_max) || (code >= 3001 && code <= common_max);
    f[std::to_string(code)] = yes;
  }
  return f;
}

json shim_field(const std::string& state,
                const std::string& reason,
                json apple = nullptr,
                json memory = nullptr) {
  // The Linux .so has no arm64e slice to offer children, so it takes itself out of LD_PRELOAD.
  return {{"state", state},
          {"reason", reason},
          {"apple_family_max", apple},
          {"max_threadgroup_memory", memory},
          {"children", state == "absent" ? json(nullptr) : json("removed")}};
}

json stock_document(const json& shim) {
  return {{"process", "lume-unlock-probe"},
          {"arch", probe::build_arch()},
          {"shim", shim},
          {"device", "Apple Paravirtual device"},
          {"families", families(1005, 3003)},
          {"max_threadgroup_memory", 32768},
          {"recommended_max_working_set_size", 11453250000ULL},
          {"llama_cpp",
           {{"simdgroup_reduction", false}, {"simdgroup_matrix", false}, {"bfloat", false}}},
          {"mlx", {{"residency_sets", false}}}};
}

json unlocked_document(long apple_max, unsigned long memory) {
  json doc = stock_document(shim_field("active", "active", apple_max, memory));
  doc["families"] = families(apple_max, 3003);
  doc["max_threadgroup_memory"] = memory;
  const bool apple7 = apple_max >= 1007;
  doc["llama_cpp"] = {
      {"simdgroup_reduction", apple7}, {"simdgroup_matrix", apple7}, {"bfloat", apple_max >= 1006}};
  return doc;
}

json parse(const ProcessResult& r) {
  return json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

std::string activation_line(long apple_max, unsigned long memory) {
  return "[lume-unlock-shim] enabled for lume-unlock-probe (appleFamilyMax=" +
         std::to_string(apple_max) + " maxThreadgroupMemory=" + std::to_string(memory) + ")\n";
}

TEST(ShimPreload, WithoutTheShimTheProbeSeesTheStockDeviceAndNoShim) {
  const ProcessResult r = probe({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parse(r), stock_document(shim_field("absent", "not_loaded")));
  EXPECT_EQ(r.err, "");
}

TEST(ShimPreload, Ceiling1009UnlocksAppleFamiliesOnly) {
  const ProcessResult r = probe(shimmed({{"LUME_METAL_APPLE_FAMILY_MAX", "1009"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = parse(r);
  EXPECT_EQ(doc, unlocked_document(1009, 65536));
  // The contract's spot checks, spelled out.
  EXPECT_EQ(doc["families"]["1009"], true);
  EXPECT_EQ(doc["families"]["1010"], false);
  EXPECT_EQ(doc["families"]["3003"], true);
  EXPECT_EQ(doc["families"]["5001"], false);
  EXPECT_EQ(doc["mlx"]["residency_sets"], false);
  EXPECT_EQ(r.err, activation_line(1009, 65536));
}

TEST(ShimPreload, DeviceListIsHookedToo) {
  const ProcessResult stock = probe({}, {"--json", "--from-list"});
  ASSERT_EQ(stock.exit_code, 0) << stock.err;
  EXPECT_EQ(parse(stock), stock_document(shim_field("absent", "not_loaded")));
  const ProcessResult r =
      probe(shimmed({{"LUME_METAL_APPLE_FAMILY_MAX", "0x3F1"}}), {"--json", "--from-list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parse(r), unlocked_document(1009, 65536));
}

TEST(ShimPreload, LowerCeilingAndThreadgroupMemoryAreHonoured) {
  const ProcessResult r = probe(shimmed(
      {{"LUME_METAL_APPLE_FAMILY_MAX", "1007"}, {"LUME_METAL_MAX_THREADGROUP_MEMORY", "0x10000"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parse(r), unlocked_document(1007, 65536));
}

TEST(ShimPreload, LimitsAreRaisedNeverLowered) {
  const ProcessResult r = probe(shimmed({{"LUME_METAL_APPLE_FAMILY_MAX", "1009"},
                                         {"LUME_METAL_MAX_THREADGROUP_MEMORY", "16384"},
                                         {"LUME_METAL_RECOMMENDED_WORKING_SET_SIZE", "1000"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json expected = unlocked_document(1009, 32768);
  expected["shim"]["max_threadgroup_memory"] = 16384;
  EXPECT_EQ(parse(r), expected);
  EXPECT_EQ(r.err, activation_line(1009, 16384));

  const ProcessResult raised =
      probe(shimmed({{"LUME_METAL_APPLE_FAMILY_MAX", "1009"},
                     {"LUME_METAL_RECOMMENDED_WORKING_SET_SIZE", "12009492480"}}));
  ASSERT_EQ(raised.exit_code, 0) << raised.err;
  EXPECT_EQ(parse(raised)["recommended_max_working_set_size"], 12009492480ULL);
}

struct InertCase {
  const char* name;
  Env env;
  const char* reason;
  const char* description;
};

TEST(ShimPreload, BadConfigurationOrKillSwitchLeavesTheDeviceStock) {
  const InertCase cases[] = {
      {"unset", {}, "apple_family_max_unset", "LUME_METAL_APPLE_FAMILY_MAX is not set"},
      {"trailing space",
       {{"LUME_METAL_APPLE_FAMILY_MAX", "1009 "}},
       "apple_family_max_malformed",
       "LUME_METAL_APPLE_FAMILY_MAX is not a decimal or 0x-hex number"},
      {"plus sign",
       {{"LUME_METAL_APPLE_FAMILY_MAX", "+1009"}},
       "apple_family_max_malformed",
       "LUME_METAL_APPLE_FAMILY_MAX is not a decimal or 0x-hex number"},
      {"overflow",
       {{"LUME_METAL_APPLE_FAMILY_MAX", "18446744073709551616"}},
       "apple_family_max_malformed",
       "LUME_METAL_APPLE_FAMILY_MAX is not a decimal or 0x-hex number"},
      {"empty",
       {{"LUME_METAL_APPLE_FAMILY_MAX", ""}},
       "apple_family_max_unset",
       "LUME_METAL_APPLE_FAMILY_MAX is not set"},
      {"1000",
       {{"LUME_METAL_APPLE_FAMILY_MAX", "1000"}},
       "apple_family_max_out_of_range",
       "LUME_METAL_APPLE_FAMILY_MAX must be 1001..1999"},
      {"metal3",
       {{"LUME_METAL_APPLE_FAMILY_MAX", "5001"}},
       "apple_family_max_out_of_range",
       "LUME_METAL_APPLE_FAMILY_MAX must be 1001..1999"},
      {"threadgroup",
       {{"LUME_METAL_APPLE_FAMILY_MAX", "1009"}, {"LUME_METAL_MAX_THREADGROUP_MEMORY", "64k"}},
       "max_threadgroup_memory_malformed",
       "LUME_METAL_MAX_THREADGROUP_MEMORY is not a decimal or 0x-hex number"},
      {"working set",
       {{"LUME_METAL_APPLE_FAMILY_MAX", "1009"}, {"LUME_METAL_RECOMMENDED_WORKING_SET_SIZE", "-1"}},
       "working_set_size_malformed",
       "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE is not a decimal or 0x-hex number"},
      {"kill switch",
       {{"LUME_METAL_APPLE_FAMILY_MAX", "1009"}, {"LUME_UNLOCK_DISABLE", "1"}},
       "disabled",
       "LUME_UNLOCK_DISABLE=1 is set"},
  };
  for (const InertCase& c : cases) {
    Env env = shimmed(c.env);
    const ProcessResult quiet = probe(env);
    ASSERT_EQ(quiet.exit_code, 0) << c.name << ": " << quiet.err;
    EXPECT_EQ(parse(quiet), stock_document(shim_field("inert", c.reason))) << c.name;
    EXPECT_EQ(quiet.err, "") << c.name;

    env["LUME_UNLOCK_LOG"] = "1";
    const ProcessResult logged = probe(env);
    EXPECT_EQ(logged.err,
              std::string("[lume-unlock-shim] inert for lume-unlock-probe: ") + c.reason + " (" +
                  c.description + ")\n")
        << c.name;
  }
}

class ShimGuard : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lume-unlock-guard-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    guard_ = (dir_ / "enabled-executables").string();
    probe_real_ = std::filesystem::canonical(k_probe).string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write_guard(const std::string& text) { std::ofstream(guard_, std::ios::binary) << text; }
  Env env() const {
    return shimmed({{"LUME_METAL_APPLE_FAMILY_MAX", "1009"},
                    {"LUME_UNLOCK_ENABLEMENT", guard_},
                    {"LUME_UNLOCK_LOG", "1"}});
  }

  std::filesystem::path dir_;
  std::string guard_;
  std::string probe_real_;
};

TEST_F(ShimGuard, ListedExecutableIsUnlocked) {
  write_guard("# lume-unlock enabled executables\r\n\r\n/opt/other/bin/tool\r\n" + probe_real_ +
              "\r\n");
  const ProcessResult r = probe(env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parse(r), unlocked_document(1009, 65536));
  EXPECT_EQ(r.err, activation_line(1009, 65536));
}

TEST_F(ShimGuard, UnlistedExecutableStaysStock) {
  write_guard("/opt/other/bin/tool\n#" + probe_real_ + "\n");
  const ProcessResult r = probe(env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parse(r), stock_document(shim_field("inert", "executable_not_enabled")));
  EXPECT_EQ(r.err,
            "[lume-unlock-shim] inert for lume-unlock-probe: executable_not_enabled (this "
            "executable is not "
            "listed in the LUME_UNLOCK_ENABLEMENT file)\n");
}

TEST_F(ShimGuard, UnreadableGuardFileStaysStock) {
  const ProcessResult r = probe(env()); // the guard file was never written
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parse(r), stock_document(shim_field("inert", "enablement_unreadable")));
}

// Empty optional variables count as unset, as in the certified build: defaults apply.
TEST(ShimPreload, EmptyOptionalVariablesAreUnset) {
  const ProcessResult r = probe(shimmed({{"LUME_METAL_APPLE_FAMILY_MAX", "1009"},
                                         {"LUME_METAL_MAX_THREADGROUP_MEMORY", ""},
                                         {"LUME_METAL_RECOMMENDED_WORKING_SET_SIZE", ""},
                                         {"LUME_UNLOCK_DISABLE", ""}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parse(r), unlocked_document(1009, 65536));
  EXPECT_EQ(r.err, activation_line(1009, 65536));
}

// A device class that never runs _MTLDevice's initGPUFamilySupport: no creation function is hooked
// (the certified build's one entry point), so it stays stock and no success line is written.
TEST(ShimPreload, ADeviceThatSkipsThePrivateInitStaysStockWithoutASuccessLine) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--json"}, std::vector<std::string>{"--json", "--from-list"}}) {
    const ProcessResult stock = probe({{"LUME_METAL_EMU_CREATES", "sibling"}}, args);
    ASSERT_EQ(stock.exit_code, 0) << stock.err;
    const json before = parse(stock);
    EXPECT_EQ(before["device"], "Apple Emulated sibling device");
    EXPECT_EQ(before["families"], families(1004, 3002));

    const ProcessResult r = probe(
        shimmed({{"LUME_METAL_EMU_CREATES", "sibling"}, {"LUME_METAL_APPLE_FAMILY_MAX", "1009"}}),
        args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json after = parse(r);
    EXPECT_EQ(after["families"], before["families"]) << args.size();
    EXPECT_EQ(after["max_threadgroup_memory"], before["max_threadgroup_memory"]);
    EXPECT_EQ(r.err, "");
  }
}

// A macOS whose private API changed: no -initGPUFamilySupport, or no _MTLDevice at all. The shim
// fails closed, says so once, and the probe reports why.
TEST(ShimPreload, MissingPrivateInitLeavesTheDeviceStockAndSaysWhy) {
  const std::string description =
      "Metal has no -[_MTLDevice initGPUFamilySupport] on this macOS; the device stays stock";
  for (const std::string& emu : {k_emu_without_init, k_emu_without_base}) {
    const std::string dir = std::filesystem::path(emu).parent_path().string();
    const ProcessResult stock = probe({{"LD_LIBRARY_PATH", dir}});
    ASSERT_EQ(stock.exit_code, 0) << stock.err;
    const ProcessResult r =
        probe(shimmed({{"LD_LIBRARY_PATH", dir}, {"LUME_METAL_APPLE_FAMILY_MAX", "1009"}}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json expected = parse(stock);
    expected["shim"] = shim_field("inert", "private_init_missing");
    EXPECT_EQ(parse(r), expected) << emu;
    EXPECT_EQ(parse(stock)["families"], families(1005, 3003)) << emu;
    EXPECT_EQ(r.err,
              "[lume-unlock-shim] not enabled for lume-unlock-probe: private_init_missing (" +
                  description + ")\n")
        << emu;
  }
}

std::map<std::string, std::string> facts(const ProcessResult& r) {
  std::map<std::string, std::string> out;
  std::size_t start = 0;
  while (start < r.out.size()) {
    const std::size_t end = r.out.find('\n', start);
    const std::string line = r.out.substr(start, end - start);
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos)
      out[line.substr(0, eq)] = line.substr(eq + 1);
    start = end == std::string::npos ? r.out.size() : end + 1;
  }
  return out;
}

// The initGPUFamilySupport path alone (devices from the emulator's own constructors, libMetalEmu
// loaded after start so GNU's load callback is what finds _MTLDevice), siblings, foreign
// receivers and never-hooked subclasses.
TEST(ShimHookPaths, InitPathHooksOnlyTheConcreteClass) {
  const ProcessResult stock =
      run_process({k_driver, k_emu}, {{"LUME_METAL_EMU_CREATES", "sibling"}});
  ASSERT_EQ(stock.exit_code, 0) << stock.err;
  const ProcessResult hooked = run_process(
      {k_driver, k_emu},
      shimmed({{"LUME_METAL_APPLE_FAMILY_MAX", "1009"}, {"LUME_METAL_EMU_CREATES", "sibling"}}));
  ASSERT_EQ(hooked.exit_code, 0) << hooked.err;
  auto before = facts(stock);
  auto after = facts(hooked);

  EXPECT_EQ(before["paravirtual.1009"], "0");
  EXPECT_EQ(before["paravirtual.max_threadgroup_memory"], "32768");
  EXPECT_EQ(after["init_count"], "1");
  EXPECT_EQ(after["paravirtual.1005"], "1");
  EXPECT_EQ(after["paravirtual.1009"], "1");
  EXPECT_EQ(after["paravirtual.1010"], "0");
  EXPECT_EQ(after["paravirtual.3003"], "1");
  EXPECT_EQ(after["paravirtual.5001"], "0");
  EXPECT_EQ(after["paravirtual.max_threadgroup_memory"], "65536");
  EXPECT_EQ(after["paravirtual.working_set"], "11453250000");
  // The private init ran with the hooks already in place (the certified build's order).
  EXPECT_EQ(before["paravirtual.family_at_init"], "1005");
  EXPECT_EQ(before["paravirtual.memory_at_init"], "32768");
  EXPECT_EQ(after["paravirtual.family_at_init"], "1009");
  EXPECT_EQ(after["paravirtual.memory_at_init"], "65536");
  EXPECT_EQ(after["base_unchanged"], "1");
  EXPECT_EQ(after["threads_ok"], "1");

  // Everything that is not the hooked paravirtual class answers exactly as without the shim.
  EXPECT_EQ(before["sibling.1004"], "1");
  EXPECT_EQ(before["sibling.1005"], "0");
  EXPECT_EQ(before["sibling.max_threadgroup_memory"], "16384");
  EXPECT_EQ(before["subclass.1009"], "0");
  std::size_t compared = 0;
  for (const auto& [key, value] : before) {
    if (key.rfind("sibling.", 0) == 0 || key.rfind("subclass.", 0) == 0 ||
        key.rfind("foreign.", 0) == 0 || key == "base_unchanged" || key == "threads_ok") {
      EXPECT_EQ(after[key], value) << key;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 24u); // sibling.* 9, subclass.* 9, foreign.* 4, base_unchanged, threads_ok
  // The public creation function is not an entry point: a sibling-class device it makes, and the
  // earlier sibling instance, stay stock.
  EXPECT_EQ(before["created.1009"], "0");
  EXPECT_EQ(before["created.max_threadgroup_memory"], "16384");
  for (const char* key : {"created.1004",
                          "created.1005",
                          "created.1009",
                          "created.max_threadgroup_memory",
                          "sibling_after.1009",
                          "sibling_after.max_threadgroup_memory"}) {
    EXPECT_EQ(after[key], before[key]) << key;
  }
  EXPECT_EQ(hooked.err,
            "[lume-unlock-shim] enabled for hook_paths_driver (appleFamilyMax=1009 "
            "maxThreadgroupMemory=65536)\n");
}

} // namespace
} // namespace lume_unlock::test

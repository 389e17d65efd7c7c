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
  return {{"state", state},
          {"reason", reason},
          {"apple_family_max", apple},
          {"max_threadgroup_memory", memory}};
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
       "apple_family_max_malformed",
       "LUME_METAL_APPLE_FAMILY_MAX is not a decimal or 0x-hex number"},
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

// A device class that never runs _MTLDevice's initGPUFamilySupport: only the interposed creation
// functions can hook it, and they must, through both of them.
TEST(ShimPreload, CreationFunctionsAloneHookADevice) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--json"}, std::vector<std::string>{"--json", "--from-list"}}) {
    const ProcessResult stock = probe({{"LUME_METAL_EMU_CREATES", "sibling"}}, args);
    ASSERT_EQ(stock.exit_code, 0) << stock.err;
    const json before = parse(stock);
    EXPECT_EQ(before["device"], "Apple Emulated sibling device");
    EXPECT_EQ(before["families"], families(1004, 3002));
    EXPECT_EQ(before["max_threadgroup_memory"], 16384);

    const ProcessResult r = probe(
        shimmed({{"LUME_METAL_EMU_CREATES", "sibling"}, {"LUME_METAL_APPLE_FAMILY_MAX", "1009"}}),
        args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json after = parse(r);
    EXPECT_EQ(after["families"], families(1009, 3002)) << args.size();
    EXPECT_EQ(after["max_threadgroup_memory"], 65536);
    EXPECT_EQ(after["recommended_max_working_set_size"], 1000000000);
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
  // A class hooked after its instances already dispatched messages: old instances see it too.
  EXPECT_EQ(before["created.1009"], "0");
  EXPECT_EQ(before["created.max_threadgroup_memory"], "16384");
  EXPECT_EQ(after["created.1005"], "1");
  EXPECT_EQ(after["created.1009"], "1");
  EXPECT_EQ(after["created.3003"], "0"); // the sibling's own Common answer stays
  EXPECT_EQ(after["created.max_threadgroup_memory"], "65536");
  EXPECT_EQ(after["sibling_after.1009"], "1");
  EXPECT_EQ(after["sibling_after.max_threadgroup_memory"], "65536");
  EXPECT_EQ(hooked.err,
            "[lume-unlock-shim] enabled for hook_paths_driver (appleFamilyMax=1009 "
            "maxThreadgroupMemory=65536)\n");
}

} // namespace
} // namespace lume_unlock::test

namespace lume_unlock::test {
namespace {

// The shim takes itself out of LD_PRELOAD when it loads (DYLD_INSERT_LIBRARIES on macOS), so the
// children of an enabled program start without it; other entries of the list stay.
TEST(ShimPreload, ChildrenOfAnInjectedProgramDoNotInheritTheShim) {
  // /bin/sh is the injected program; `env` is its child and prints what it inherited.
  auto alone = run_process({"/bin/sh", "-c", "/usr/bin/env"}, {{"LD_PRELOAD", k_shim}});
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_EQ(alone.out.find("LD_PRELOAD="), std::string::npos) << alone.out;

  auto among = run_process({"/bin/sh", "-c", "/usr/bin/env"},
                           {{"LD_PRELOAD", k_emu + ":" + k_shim + " " + k_emu}});
  ASSERT_EQ(among.exit_code, 0) << among.err;
  EXPECT_NE(("\n" + among.out).find("\nLD_PRELOAD=" + k_emu + ":" + k_emu + "\n"),
            std::string::npos)
      << among.out;
  EXPECT_EQ(among.out.find(k_shim), std::string::npos) << among.out;
}

} // namespace
} // namespace lume_unlock::test

// The rule for the children of an injected program (DESIGN §4.2): a dylib that every child can
// load (universal on macOS) stays in the injection variable and the guard file decides per
// executable; one that cannot (arm64-only, and the Linux .so that stands in for it) takes itself
// out at load. /bin/sh is the injected program; its child tells what it inherited.
#include "process_runner.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace lume_unlock::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using Env = std::map<std::string, std::string>;
using nlohmann::json;

const std::string k_probe = LUME_UNLOCK_TEST_PROBE;
const std::string k_shim = LUME_UNLOCK_TEST_SHIM;
const std::string k_emu = LUME_UNLOCK_TEST_EMU;
const std::string k_shim_universal = LUME_UNLOCK_TEST_SHIM_UNIVERSAL;

TEST(ShimChildren, AnArm64OnlyShimTakesItselfOutOfTheVariable) {
  auto alone = run_process({"/bin/sh", "-c", "/usr/bin/env"}, {{"LD_PRELOAD", k_shim}});
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_THAT(alone.out, Not(HasSubstr("LD_PRELOAD=")));

  // Other entries stay, in order.
  auto among = run_process({"/bin/sh", "-c", "/usr/bin/env"},
                           {{"LD_PRELOAD", k_emu + ":" + k_shim + " " + k_emu}});
  ASSERT_EQ(among.exit_code, 0) << among.err;
  EXPECT_THAT(("\n" + among.out), HasSubstr("\nLD_PRELOAD=" + k_emu + ":" + k_emu + "\n"))
      << among.out;
  EXPECT_THAT(among.out, Not(HasSubstr(k_shim)));
}

TEST(ShimChildren, AUniversalShimStaysInTheVariable) {
  auto r = run_process({"/bin/sh", "-c", "/usr/bin/env"}, {{"LD_PRELOAD", k_shim_universal}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(("\n" + r.out), HasSubstr("\nLD_PRELOAD=" + k_shim_universal + "\n")) << r.out;
}

class ShimChildOfAListedProgram : public ::testing::Test {
protected:
  /// The probe's JSON as a child of /bin/sh, which is injected with `shim` and always listed.
  json child_probe(const std::string& shim, bool child_listed) {
    std::ofstream guard(guard_, std::ios::binary);
    guard << std::filesystem::canonical("/bin/sh").string() << "\n";
    if (child_listed)
      guard << std::filesystem::canonical(k_probe).string() << "\n";
    guard.close();
    const ProcessResult r = run_process({"/bin/sh", "-c", "\"$0\" --json", k_probe},
                                        {{"LD_PRELOAD", shim},
                                         {"LUME_METAL_APPLE_FAMILY_MAX", "1009"},
                                         {"LUME_UNLOCK_ENABLEMENT", guard_}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  }

  TempDir dir_{"lume-unlock-children"};
  std::string guard_ = dir_ / "enabled-executables";
};

TEST_F(ShimChildOfAListedProgram, AListedChildInheritsAUniversalShim) {
  const json doc = child_probe(k_shim_universal, /*child_listed=*/true);
  EXPECT_EQ(doc["shim"]["state"], "active") << doc.dump();
  EXPECT_EQ(doc["shim"]["children"], "inherit");
  EXPECT_EQ(doc["families"]["1009"], true);
  EXPECT_EQ(doc["max_threadgroup_memory"], 65536);
}

TEST_F(ShimChildOfAListedProgram, AnUnlistedChildStaysStockEitherWay) {
  const json inherited = child_probe(k_shim_universal, /*child_listed=*/false);
  EXPECT_EQ(inherited["shim"]["state"], "inert") << inherited.dump();
  EXPECT_EQ(inherited["shim"]["reason"], "executable_not_enabled");
  EXPECT_EQ(inherited["families"]["1009"], false);
  EXPECT_EQ(inherited["max_threadgroup_memory"], 32768);

  const json removed = child_probe(k_shim, /*child_listed=*/false);
  EXPECT_EQ(removed["shim"]["state"], "absent") << removed.dump();
  EXPECT_EQ(removed["families"]["1009"], false);
}

TEST_F(ShimChildOfAListedProgram, AListedChildStartsStockWhenTheShimRemovedItself) {
  const json doc = child_probe(k_shim, /*child_listed=*/true);
  EXPECT_EQ(doc["shim"]["state"], "absent") << doc.dump();
  EXPECT_EQ(doc["families"]["1009"], false);
  EXPECT_EQ(doc["max_threadgroup_memory"], 32768);
}

} // namespace
} // namespace lume_unlock::test

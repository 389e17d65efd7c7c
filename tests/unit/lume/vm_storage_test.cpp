// Where Lume keeps a VM, asked of Lume (Settings.swift: vmLocations, defaultLocationName;
// lume-api.md §3.1 locationName), never LUME_HOME.
#include "lume/client.hpp"
#include "support/scripted_lume.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace lume_unlock::lume {
namespace {

class LocatedLume : public test::LumeApiStub {
public:
  LumeConfig settings;
  std::optional<VmState> vm;
  Result<LumeConfig> config() override { return settings; }
  Result<std::optional<VmState>> find(const VmRef&) override { return vm; }
};

TEST(VmStorage, ANewVmGoesToTheDefaultLocationByNameWithTheTildeExpanded) {
  LocatedLume lume;
  lume.settings.vm_locations = {{"home", "~/.lume"}, {"ssd", "/Volumes/ssd/lume"}};
  lume.settings.default_location_name = "ssd";
  setenv("LUME_HOME", "/not/lumes/setting", 1);
  EXPECT_EQ(vm_directory(lume, "demo").value(), "/Volumes/ssd/lume/demo");
  EXPECT_EQ(default_location_path(lume).value(), "/Volumes/ssd/lume");
  unsetenv("LUME_HOME");
  lume.settings.default_location_name = "home";
  EXPECT_EQ(vm_directory(lume, "demo").value(), std::string(std::getenv("HOME")) + "/.lume/demo");
}

TEST(VmStorage, AnExistingVmIsWhereItsLocationNameSays) {
  LocatedLume lume;
  lume.settings.vm_locations = {{"home", "/h"}, {"ssd", "/s"}};
  lume.settings.default_location_name = "home";
  VmDetails details;
  details.name = "demo";
  details.location_name = "ssd";
  lume.vm = VmState(details);
  EXPECT_EQ(vm_directory(lume, "demo").value(), "/s/demo");
  details.location_name = "/direct/path"; // a VM addressed by a storage path
  lume.vm = VmState(details);
  EXPECT_EQ(vm_directory(lume, "demo").value(), "/direct/path/demo");
  details.location_name = "gone";
  lume.vm = VmState(details);
  auto missing = vm_directory(lume, "demo");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().category(), ErrorCategory::lume_api);
  EXPECT_EQ(missing.error().why(), "GET /lume/config lists no location of that name");
}

} // namespace
} // namespace lume_unlock::lume

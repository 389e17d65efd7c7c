#include "enablement/enablement_plan.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::enablement {
namespace {

TEST(Launchctl, CommandsAreWordListsInTheGuiDomain) {
  const std::string plist = "/Users/a b/Library/LaunchAgents/dev.lume-unlock.x.plist";
  EXPECT_EQ(gui_domain(501), "gui/501");
  EXPECT_EQ(launchctl_bootstrap(501, plist), (Argv{"launchctl", "bootstrap", "gui/501", plist}));
  EXPECT_EQ(launchctl_bootout(501, "dev.lume-unlock.x"),
            (Argv{"launchctl", "bootout", "gui/501/dev.lume-unlock.x"}));
  EXPECT_EQ(launchctl_print(501, "dev.lume-unlock.x"),
            (Argv{"launchctl", "print", "gui/501/dev.lume-unlock.x"}));
  EXPECT_EQ(plutil_lint({plist, "/b"}), (Argv{"plutil", "-lint", plist, "/b"}));
}

} // namespace
} // namespace lume_unlock::enablement

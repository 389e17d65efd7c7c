// The examples in launchd/ are documentation; this test keeps them what the code produces.

#include "enablement/enablement_list.hpp"
#include "enablement/enablement_plan.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace lume_unlock::enablement {
namespace {

std::string read_example(const std::string& name) {
  const std::string path = std::string(LUME_UNLOCK_SOURCE_DIR) + "/launchd/examples/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The example guest: $HOME /Users/lume, a shim whose SHA-256 is this (launchd/README.md says so).
const char* const k_example_home = "/Users/lume";
const char* const k_example_shim_sha256 =
    "d2ce11e6cd74e903282f7b39d2cf79a029105733031e228a38beeda795069801";

EnablementList example_list() {
  return parse_enablement_yaml(read_example("enablement.yaml"), "launchd/examples/enablement.yaml")
      .value_or_throw();
}

TEST(EnablementExamples, CommittedPlistIsWhatTheRendererProduces) {
  const EnablementList list = example_list();
  const EnablementEntry* server = list.find("llama-server");
  ASSERT_NE(server, nullptr);
  const guest::GuestLayout layout =
      guest::GuestLayout::make(k_example_home, k_example_shim_sha256).value_or_throw();
  const std::string rendered =
      render_launch_agent(*server, layout, AgentSettings{}).value_or_throw();
  EXPECT_EQ(rendered, read_example("dev.lume-unlock.llama-server.plist"));
}

TEST(EnablementExamples, CommittedGuardFileIsWhatTheRendererProduces) {
  EXPECT_EQ(render_guard_file(example_list()), read_example("enabled-executables"));
}

} // namespace
} // namespace lume_unlock::enablement

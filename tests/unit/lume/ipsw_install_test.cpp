// install_from_ipsw's wait: Lume's unattended setup stops and boots the VM between phases
// without a marker, so only a VM that stays stopped for the settle time is finished.
#include "lume/client.hpp"
#include "support/scripted_lume.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::lume {
namespace {

using namespace std::chrono_literals;
using test::scripted_gone;
using test::scripted_vm;

IpswInstallRequest request(test::FakeClock& clock) {
  IpswInstallRequest r;
  r.vm = "dev";
  r.ipsw = "latest";
  r.unattended = "tahoe";
  r.cpu = 8;
  r.memory_bytes = 16ULL << 30;
  r.settle = 20s;
  r.timeout = 1h;
  r.clock = &clock;
  return r;
}

TEST(IpswInstall, AsksLumeForTheRecipesVmAndWaitsThroughEveryUnattendedPhase) {
  test::ScriptedLume lume;
  test::FakeClock clock;
  // provisioning, a stop between phases (shorter than the settle time), the verification boot,
  // then stopped for good.
  lume.answers = {scripted_vm("provisioning"),
                  scripted_vm("provisioning"),
                  scripted_vm("stopped"),
                  scripted_vm("stopped"),
                  scripted_vm("running"),
                  scripted_vm("running"),
                  scripted_vm("stopped")};
  const VmTransition result = install_from_ipsw(lume, request(clock)).value_or_throw();
  EXPECT_TRUE(result.changed);
  EXPECT_EQ(result.summary, "installed macOS from latest, unattended setup tahoe");
  ASSERT_EQ(lume.creates.size(), 1u);
  EXPECT_EQ(lume.creates[0].ipsw, "latest");
  EXPECT_EQ(lume.creates[0].unattended, "tahoe");
  EXPECT_EQ(lume.creates[0].cpu, 8u);
  EXPECT_EQ(lume.creates[0].memory_bytes, 16ULL << 30);
  EXPECT_EQ(lume.answers.size(), 1u) << "returned before the last phase";
  EXPECT_GE(lume.finds, 8); // the final stop was watched for the whole settle time
}

TEST(IpswInstall, AFailedInstallThatDeletesTheVmIsAnError) {
  test::ScriptedLume lume;
  test::FakeClock clock;
  lume.answers = {scripted_vm("provisioning"), scripted_gone()};
  try {
    install_from_ipsw(lume, request(clock)).value_or_throw();
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.category(), ErrorCategory::lume_api);
    EXPECT_NE(error.message().find("'dev'"), std::string::npos) << error.message();
  }
}

TEST(IpswInstall, GivesUpAtTheDeadline) {
  test::ScriptedLume lume;
  test::FakeClock clock;
  lume.answers = {scripted_vm("provisioning")};
  auto r = request(clock);
  r.timeout = 10min;
  try {
    install_from_ipsw(lume, r).value_or_throw();
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.category(), ErrorCategory::lume_api);
    EXPECT_NE(error.message().find("last status: provisioning"), std::string::npos)
        << error.message();
  }
}

} // namespace
} // namespace lume_unlock::lume

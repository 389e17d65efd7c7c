#include "lume/client.hpp"
#include "support/scripted_lume.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::lume {
namespace {

using namespace std::chrono_literals;

using ScriptedApi = test::ScriptedLume;
using test::FakeClock;

Result<std::optional<VmState>>
vm(const std::string& status, std::optional<std::string> ip = {}, std::optional<bool> ssh = {}) {
  return test::scripted_vm(status, std::move(ip), ssh);
}

Result<std::optional<VmState>> gone() {
  return test::scripted_gone();
}

Result<std::optional<VmState>> pulling(double progress) {
  return std::optional<VmState>(VmState(PullProgress{"dev", progress}));
}

WaitOptions options(FakeClock& clock, std::chrono::milliseconds timeout = 60s) {
  WaitOptions o;
  o.what = "VM 'dev' to be ready";
  o.timeout = timeout;
  o.first_interval = 1000ms;
  o.max_interval = 4000ms;
  o.vanish_grace = 3000ms;
  o.clock = &clock;
  return o;
}

TEST(WaitUntil, ReturnsTheFirstStateThatSatisfiesThePredicate) {
  ScriptedApi api;
  api.answers = {vm("running"), vm("running", "10.0.0.2", false), vm("running", "10.0.0.2", true)};
  FakeClock clock;
  auto r = wait_until(api, "dev", is_ssh_ready, options(clock));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(std::get<VmDetails>(r.value()).ip_address, "10.0.0.2");
  EXPECT_EQ(api.finds, 3);
}

TEST(WaitUntil, BacksOffUpToTheMaximumInterval) {
  ScriptedApi api;
  api.answers = {vm("provisioning")};
  FakeClock clock;
  auto r = wait_until(api, "dev", is_stopped, options(clock, 20s));
  ASSERT_FALSE(r.ok());
  std::vector<long> ms;
  for (auto s : clock.sleeps) {
    ms.push_back(static_cast<long>(s.count()));
  }
  // 1 s growing by half up to 4 s; the last sleep is cut to the deadline.
  EXPECT_EQ(ms, (std::vector<long>{1000, 1500, 2250, 3375, 4000, 4000, 3875}));
}

TEST(WaitUntil, TimeoutNamesWhatWasAwaitedAndTheLastStatus) {
  ScriptedApi api;
  api.answers = {vm("running", "10.0.0.2", false)};
  FakeClock clock;
  auto r = wait_until(api, "dev", is_ssh_ready, options(clock, 90s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "waiting for VM 'dev' to be ready: gave up after 90 s; last status: running (10.0.0.2, "
            "ssh not reachable)");
  EXPECT_EQ(r.error().category(), ErrorCategory::lume_api);
  EXPECT_EQ(r.error().hint(), "check the VM with `lume ls`; if it is still working, wait longer");
}

TEST(WaitUntil, ABriefNotFoundDuringCreateIsTolerated) {
  // Lume deletes the pre-created directory and moves the installed one into place (§3.4).
  ScriptedApi api;
  api.answers = {vm("provisioning"), gone(), vm("stopped")};
  FakeClock clock;
  auto r = wait_until(api, "dev", is_stopped, options(clock));
  ASSERT_TRUE(r.ok()) << r.error().message();
}

TEST(WaitUntil, AVmMissingLongerThanTheGraceHasDisappeared) {
  ScriptedApi api;
  api.answers = {vm("provisioning"), gone()};
  FakeClock clock;
  auto r = wait_until(api, "dev", is_stopped, options(clock));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "waiting for VM 'dev' to be ready: VM 'dev' disappeared (Lume no longer knows it; last "
            "seen provisioning)");
  EXPECT_EQ(r.error().hint(),
            "a failed create or pull deletes the VM; see Lume's log "
            "(/tmp/lume_daemon.log when started at login)");
}

TEST(WaitUntil, AVmNeverSeenIsReportedAsNeverSeen) {
  ScriptedApi api;
  api.answers = {gone()};
  FakeClock clock;
  auto r = wait_until(api, "dev", is_running, options(clock));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().why(), "VM 'dev' disappeared (Lume no longer knows it; never seen)");
}

TEST(WaitUntil, ALumeErrorEndsTheWaitWithContext) {
  ScriptedApi api;
  api.answers = {Error(ErrorCategory::lume_api,
                       "status of VM 'dev'",
                       "Lume answered HTTP 400: Pull failed for 'dev': boom")};
  FakeClock clock;
  auto r = wait_until(api, "dev", is_pull_finished, options(clock));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "waiting for VM 'dev' to be ready: status of VM 'dev': Lume "
            "answered HTTP 400: Pull failed for 'dev': boom");
  EXPECT_TRUE(clock.sleeps.empty());
}

TEST(WaitUntil, PullProgressIsReportedInPercent) {
  ScriptedApi api;
  api.answers = {pulling(0), pulling(42.4), vm("stopped")};
  FakeClock clock;
  std::vector<util::ProgressEvent> events;
  WaitOptions o = options(clock);
  o.progress = [&](const util::ProgressEvent& e) { events.push_back(e); };
  auto r = wait_until(api, "dev", is_pull_finished, o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[1].done, 42u);
  EXPECT_EQ(events[1].total, 100u);
  EXPECT_EQ(events[1].unit, "%");
  EXPECT_EQ(events[1].detail, "pulling 42%");
  EXPECT_EQ(events[1].step, "VM 'dev' to be ready");
  EXPECT_TRUE(events[3].finished);
  EXPECT_EQ(events[3].detail, "stopped");
}

TEST(Predicates, MatchTheirStatus) {
  EXPECT_TRUE(is_stopped(*vm("stopped").value()));
  EXPECT_FALSE(is_stopped(*vm("provisioning").value()));
  EXPECT_TRUE(is_running(*vm("running").value()));
  EXPECT_FALSE(is_ssh_ready(*vm("running", "10.0.0.2").value()));
  EXPECT_FALSE(is_ssh_ready(*vm("stopped", "10.0.0.2", true).value()));
  EXPECT_TRUE(is_ssh_ready(*vm("running", "10.0.0.2", true).value()));
  EXPECT_FALSE(is_pull_finished(*pulling(100).value()));
}

} // namespace
} // namespace lume_unlock::lume

#include "lume/wait.hpp"

#include <gtest/gtest.h>

#include <deque>

namespace lume_unlock::lume {
namespace {

using namespace std::chrono_literals;

/// Time that only moves when wait_until sleeps.
class FakeClock : public WaitClock {
public:
  std::chrono::steady_clock::time_point now() override { return m_now; }
  void sleep_for(std::chrono::milliseconds d) override {
    sleeps.push_back(d);
    m_now += d;
  }
  std::vector<std::chrono::milliseconds> sleeps;

private:
  std::chrono::steady_clock::time_point m_now{};
};

/// Answers find() from a script; the last answer repeats. Everything else is unused here.
class ScriptedApi : public LumeApi {
public:
  std::deque<Result<std::optional<VmState>>> answers;
  int finds = 0;

  Result<std::optional<VmState>> find(const VmRef&) override {
    ++finds;
    auto answer = answers.front();
    if (answers.size() > 1) {
      answers.pop_front();
    }
    return answer;
  }
  Result<std::vector<VmDetails>> list() override { return unused(); }
  Result<VmState> get(const VmRef&) override { return unused(); }
  Status create(const CreateRequest&) override { return unused(); }
  Status patch(const VmRef&, const PatchRequest&) override { return unused(); }
  Status run(const VmRef&, const RunOptions&) override { return unused(); }
  Status stop(const VmRef&) override { return unused(); }
  Status remove(const VmRef&) override { return unused(); }
  Status clone(const CloneRequest&) override { return unused(); }
  Status pull(const PullRequest&) override { return unused(); }
  Status pull_start(const PullRequest&) override { return unused(); }
  Status push(const PushRequest&) override { return unused(); }
  Result<std::vector<ImageInfo>> images() override { return unused(); }
  Result<LumeConfig> config() override { return unused(); }
  Result<HostStatus> host_status() override { return unused(); }

private:
  static Error unused() { return Error(ErrorCategory::failure, "scripted api", "not scripted"); }
};

Result<std::optional<VmState>> vm(const std::string& status, std::optional<std::string> ip = {},
                                  std::optional<bool> ssh = {}) {
  VmDetails d;
  d.name = "dev";
  d.status_text = status;
  d.status = parse_status(status);
  d.ip_address = ip;
  d.ssh_available = ssh;
  return std::optional<VmState>(VmState(d));
}

Result<std::optional<VmState>> gone() { return std::optional<VmState>(); }

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
  EXPECT_EQ(r.error().hint(), "a failed create or pull deletes the VM; see Lume's log "
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
  api.answers = {Error(ErrorCategory::lume_api, "status of VM 'dev'",
                       "Lume answered HTTP 400: Pull failed for 'dev': boom")};
  FakeClock clock;
  auto r = wait_until(api, "dev", is_pull_finished, options(clock));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "waiting for VM 'dev' to be ready: status of VM 'dev': Lume "
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

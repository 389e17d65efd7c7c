#pragma once
// A LumeApi whose GET answers come from a script, and a clock that only moves when slept on:
// for unit tests of the code that polls Lume (lume::wait_until and its callers).
#include "lume/client.hpp"

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::test {

/// Time that only moves when someone sleeps.
class FakeClock : public lume::WaitClock {
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

/// A LumeApi on which every call fails as "not scripted": test doubles derive from it and
/// override only what the code under test calls.
class LumeApiStub : public lume::LumeApi {
public:
  Result<std::vector<lume::VmDetails>> list() override { return unused(); }
  Result<lume::VmState> get(const lume::VmRef&) override { return unused(); }
  Result<std::optional<lume::VmState>> find(const lume::VmRef&) override { return unused(); }
  Status create(const lume::CreateRequest&) override { return unused(); }
  Status patch(const lume::VmRef&, const lume::PatchRequest&) override { return unused(); }
  Status run(const lume::VmRef&, const lume::RunOptions&) override { return unused(); }
  Status stop(const lume::VmRef&) override { return unused(); }
  Status remove(const lume::VmRef&) override { return unused(); }
  Status clone(const lume::CloneRequest&) override { return unused(); }
  Status pull(const lume::PullRequest&) override { return unused(); }
  Status pull_start(const lume::PullRequest&) override { return unused(); }
  Status push(const lume::PushRequest&) override { return unused(); }
  Result<std::vector<lume::ImageInfo>> images() override { return unused(); }
  Result<lume::LumeConfig> config() override { return unused(); }
  Result<lume::LumeLogs> logs() override { return unused(); }
  Result<lume::HostStatus> host_status() override { return unused(); }

protected:
  static Error unused() { return Error(ErrorCategory::failure, "test lume", "not scripted"); }
};

/// Answers find() (and get()) from `answers`, the last answer repeating; records create()
/// requests.
class ScriptedLume : public LumeApiStub {
public:
  std::deque<Result<std::optional<lume::VmState>>> answers;
  std::vector<lume::CreateRequest> creates;
  int finds = 0;

  Result<std::optional<lume::VmState>> find(const lume::VmRef&) override {
    ++finds;
    auto answer = answers.front();
    if (answers.size() > 1) {
      answers.pop_front();
    }
    return answer;
  }
  Result<lume::VmState> get(const lume::VmRef& vm) override {
    auto found = find(vm);
    if (!found.ok()) {
      return found.error();
    }
    if (!found.value()) {
      return Error(ErrorCategory::lume_api, "scripted api", "VM not found");
    }
    return *found.value();
  }
  Status create(const lume::CreateRequest& request) override {
    creates.push_back(request);
    return ok_status();
  }
};

/// A scripted answer: the VM with this status (and address / SSH state).
inline Result<std::optional<lume::VmState>> scripted_vm(const std::string& status,
                                                        std::optional<std::string> ip = {},
                                                        std::optional<bool> ssh = {}) {
  lume::VmDetails d;
  d.name = "dev";
  d.status_text = status;
  d.status = lume::parse_status(status);
  d.ip_address = ip;
  d.ssh_available = ssh;
  return std::optional<lume::VmState>(lume::VmState(d));
}

/// A scripted answer: no such VM.
inline Result<std::optional<lume::VmState>> scripted_gone() {
  return std::optional<lume::VmState>();
}

} // namespace lume_unlock::test

// The Lume client against a real lume-sim process: contract tests and the exact errors a user
// sees when Lume misbehaves (faults injected through lume-sim).
#include "cli/context.hpp"
#include "lume/client.hpp"
#include "support/loopback_listener.hpp"
#include "support/lume_sim.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

namespace lume_unlock::lume {
namespace {

using ::testing::HasSubstr;

using test::LoopbackListener;
using test::LumeSim;
using namespace std::chrono_literals;

std::unique_ptr<LumeSim> start_sim(std::vector<std::string> args = {}) {
  return std::make_unique<LumeSim>(LUME_SIM_BINARY, std::move(args));
}

#define START_SIM(var, ...)                                                                        \
  auto var = start_sim(__VA_ARGS__);                                                               \
  LUME_UNLOCK_REQUIRE(var->started(), var->failure())

ClientOptions options_for(const LumeSim& sim) {
  ClientOptions o;
  o.base_url = sim.url();
  o.retry_delay = 10ms;
  return o;
}

CreateRequest linux_vm(const std::string& name) {
  CreateRequest r;
  r.name = name;
  r.os = "linux";
  r.cpu = 2;
  r.memory_bytes = 4ull << 30;
  r.disk_bytes = 10ull << 30;
  return r;
}

WaitOptions quick_wait(std::string what, std::chrono::milliseconds timeout = 10s) {
  WaitOptions w;
  w.what = std::move(what);
  w.timeout = timeout;
  w.first_interval = 20ms;
  w.max_interval = 100ms;
  w.vanish_grace = 200ms;
  return w;
}

/// The whole error as the user sees it: message, hint, category.
std::string shown(const Error& e) {
  return e.message() + " | hint: " + e.hint() + " | exit " +
         std::to_string(exit_code(e.category()));
}

TEST(LumeClient, CallAgainstAStoppedLumeFailsWithExitCode3AndSaysHowToStartIt) {
  START_SIM(sim);
  const std::string url = sim->url();
  sim->stop();
  ClientOptions o;
  o.base_url = url;
  LumeClient client(o);
  auto listed = client.list();
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().category(), ErrorCategory::lume_api);
  EXPECT_EQ(exit_code(listed.error().category()), 3);
  EXPECT_EQ(shown(listed.error()),
            "list of VMs: cannot connect to Lume at " + url +
                ": connection refused | hint: start Lume with `lume serve` (or pass --lume-url) | "
                "exit 3");
  EXPECT_EQ(client.request_count(), 1u) << "connection refused is not retried";

  // As the CLI renders it (run_cli reports every Error through Context::report).
  std::ostringstream out;
  std::ostringstream err;
  cli::Context context(out, err, false, false);
  EXPECT_EQ(context.report(listed.error()), 3);
  EXPECT_EQ(err.str(),
            "lume-unlock: error: list of VMs: cannot connect to Lume at " + url +
                ": connection refused\nhint: start Lume with `lume serve` (or pass "
                "--lume-url)\n");
}

TEST(LumeClient, FullLifecycleAgainstTheSimulator) {
  LoopbackListener sshd; // stands in for the guest's sshd
  START_SIM(sim,
            {"--create-delay-ms",
             "1000",
             "--boot-delay-ms",
             "200",
             "--stop-delay-ms",
             "10",
             "--guest-address",
             "127.0.0.1",
             "--guest-ssh-port",
             std::to_string(sshd.port())});
  LumeClient client(options_for(*sim));

  ASSERT_TRUE(client.list().ok());
  EXPECT_TRUE(client.list().value().empty());
  auto missing = client.find("dev");
  ASSERT_TRUE(missing.ok()) << missing.error().message();
  EXPECT_FALSE(missing.value().has_value());

  ASSERT_TRUE(client.create(linux_vm("dev")).ok());
  auto provisioning = client.get("dev");
  ASSERT_TRUE(provisioning.ok()) << provisioning.error().message();
  const auto& p = std::get<VmDetails>(provisioning.value());
  EXPECT_EQ(p.status, VmStatus::provisioning);
  EXPECT_EQ(p.provisioning_operation, "ipsw_install");
  EXPECT_EQ(p.memory_size, 4ull << 30);
  EXPECT_EQ(p.disk_size.total, 10ull << 30);

  std::vector<std::string> progress;
  WaitOptions w = quick_wait("VM 'dev' to finish provisioning");
  w.progress = [&](const util::ProgressEvent& e) { progress.push_back(e.detail); };
  auto created = wait_until(client, "dev", is_stopped, w);
  ASSERT_TRUE(created.ok()) << created.error().message();
  EXPECT_EQ(progress.front(), "provisioning");
  EXPECT_EQ(progress.back(), "stopped");

  PatchRequest patch;
  patch.cpu = 8;
  patch.memory_bytes = 16ull << 30;
  ASSERT_TRUE(client.patch("dev", patch).ok());
  auto patched = std::get<VmDetails>(client.get("dev").value());
  EXPECT_EQ(patched.cpu_count, 8u);
  EXPECT_EQ(patched.memory_size, 16ull << 30);

  ASSERT_TRUE(client.run("dev", RunOptions{}).ok());
  auto ready = wait_until(client, "dev", is_ssh_ready, quick_wait("VM 'dev' to accept SSH"));
  ASSERT_TRUE(ready.ok()) << ready.error().message();
  EXPECT_EQ(std::get<VmDetails>(ready.value()).ip_address, "127.0.0.1");
  EXPECT_EQ(client.host_status().value().vm_count, 1u);

  auto refused = client.patch("dev", patch);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(shown(refused.error()),
            "settings change of VM 'dev': Lume answered HTTP 400: Virtual machine already running: "
            "dev | hint:  | exit 3");

  ASSERT_TRUE(client.stop("dev").ok());
  EXPECT_EQ(status_of(client.get("dev").value()), VmStatus::stopped);

  CloneRequest clone;
  clone.name = "dev";
  clone.new_name = "dev-copy";
  ASSERT_TRUE(client.clone(clone).ok());
  auto names = client.list().value();
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].name, "dev");
  EXPECT_EQ(names[1].name, "dev-copy");

  ASSERT_TRUE(client.remove("dev").ok()) << "DELETE's empty 200 body is success";
  ASSERT_TRUE(client.remove("dev-copy").ok());
  EXPECT_FALSE(client.find("dev").value().has_value());

  auto config = client.config();
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config.value().default_location_name, "home");
  ASSERT_EQ(config.value().vm_locations.size(), 1u);
  EXPECT_TRUE(client.images().value().empty());
  EXPECT_EQ(client.host_status().value().max_vms, 2u);
}

TEST(LumeClient, AllCallsShareOneKeptAliveConnection) {
  START_SIM(sim);
  LumeClient client(options_for(*sim));
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(client.list().ok());
    ASSERT_TRUE(client.host_status().ok());
  }
  std::set<std::string> peers;
  std::regex peer(R"(\(peer port ([0-9]+)\))");
  const std::string log = sim->process().stderr_text();
  for (std::sregex_iterator it(log.begin(), log.end(), peer), end; it != end; ++it) {
    peers.insert((*it)[1].str());
  }
  EXPECT_EQ(peers.size(), 1u) << log;
}

TEST(LumeClient, MissingVmNamesTheOperationStatusAndLumesMessage) {
  START_SIM(sim);
  LumeClient client(options_for(*sim));
  auto got = client.get("ghost");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(
      shown(got.error()),
      "status of VM 'ghost': Lume answered HTTP 400: Virtual machine not found: ghost | hint: "
      "list the VMs Lume knows with `lume ls` | exit 3");
  EXPECT_TRUE(is_vm_not_found(got.error()));
  auto stopped = client.stop("ghost");
  EXPECT_EQ(stopped.error().message(),
            "stop of VM 'ghost': Lume answered HTTP 400: Virtual machine not found: ghost");
}

TEST(LumeClient, InvalidVmNamesAreRejectedBeforeAnyRequest) {
  START_SIM(sim);
  LumeClient client(options_for(*sim));
  const std::pair<std::string, std::string> cases[] = {
      {"a/b", "invalid VM name 'a/b': '/' is not allowed"},
      {"..", "invalid VM name '..': '.' and '..' name directories, not VMs"},
      {"my vm", "invalid VM name 'my vm': a space is not allowed"},
      {"img:tag", "invalid VM name 'img:tag': ':' is not allowed"},
      {"", "invalid VM name '': the name is empty"},
  };
  for (const auto& [name, message] : cases) {
    auto created = client.create(linux_vm(name));
    ASSERT_FALSE(created.ok()) << name;
    EXPECT_EQ(created.error().message(), message);
    EXPECT_EQ(created.error().category(), ErrorCategory::usage);
    EXPECT_EQ(client.get(name).error().message(), message);
    EXPECT_EQ(client.run(name, {}).error().message(), message);
  }
  EXPECT_EQ(client.request_count(), 0u);
}

TEST(LumeClient, SlowLumeTimesOutNamingTheWait) {
  START_SIM(sim, {"--latency-ms", "1500"});
  ClientOptions o = options_for(*sim);
  o.request_timeout = 300ms;
  LumeClient client(o);
  auto listed = client.list();
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(shown(listed.error()),
            "list of VMs: no answer from Lume at " + sim->url() +
                " within 0.3 s | hint: Lume handles one request at a time and may be busy; check "
                "that `lume serve` is responsive (`curl " +
                sim->url() + "/lume/host/status`) and retry | exit 3");
  EXPECT_EQ(client.request_count(), 1u) << "timeouts are not retried";
}

TEST(LumeClient, PersistentServerErrorIsReportedAfterBoundedRetries) {
  START_SIM(sim, {"--fault", "GET /lume/vms=500"});
  LumeClient client(options_for(*sim));
  auto listed = client.list();
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(shown(listed.error()),
            "list of VMs: Lume answered HTTP 500: lume-sim injected fault | hint: see Lume's log "
            "(/tmp/lume_daemon.error.log when started at login) and retry | exit 3");
  EXPECT_EQ(client.request_count(), 3u);
}

TEST(LumeClient, TransientServerErrorOnAGetIsRetried) {
  START_SIM(sim, {"--fault", "GET /lume/vms=500x1"});
  LumeClient client(options_for(*sim));
  auto listed = client.list();
  ASSERT_TRUE(listed.ok()) << listed.error().message();
  EXPECT_EQ(client.request_count(), 2u);
}

TEST(LumeClient, ServerErrorOnAPostIsNotRetried) {
  START_SIM(sim, {"--fault", "POST /lume/vms/dev/run=500x1"});
  LumeClient client(options_for(*sim));
  auto run = client.run("dev", {});
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().message(),
            "start of VM 'dev': Lume answered HTTP 500: lume-sim injected fault");
  EXPECT_EQ(client.request_count(), 1u);
}

TEST(LumeClient, DroppedConnectionOnAGetIsRetriedThenReported) {
  START_SIM(sim, {"--drop", "GET /lume/vms/dev"});
  LumeClient client(options_for(*sim));
  auto got = client.get("dev");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(shown(got.error()),
            "status of VM 'dev': the connection to Lume at " + sim->url() +
                " failed: Empty reply from server (3 attempts) | hint: check that --lume-url "
                "points at `lume serve` and retry | exit 3");
  EXPECT_EQ(client.request_count(), 3u);
}

TEST(LumeClient, DroppedConnectionOnAGetOnceIsHiddenByTheRetry) {
  START_SIM(sim, {"--drop", "GET /lume/vms=x1"});
  LumeClient client(options_for(*sim));
  auto listed = client.list();
  ASSERT_TRUE(listed.ok()) << listed.error().message();
  EXPECT_EQ(client.request_count(), 2u);
}

TEST(LumeClient, DroppedCreateIsNotRetried) {
  START_SIM(sim, {"--drop", "POST /lume/vms=x1"});
  LumeClient client(options_for(*sim));
  auto created = client.create(linux_vm("dev"));
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().message(),
            "create of VM 'dev': the connection to Lume at " + sim->url() +
                " failed: Empty reply from server");
  EXPECT_EQ(client.request_count(), 1u);
  EXPECT_FALSE(client.find("dev").value().has_value()) << "a retry would have created it";
}

TEST(LumeClient, MalformedJsonIsReportedWithItsPosition) {
  START_SIM(sim,
            {"--fault",
             R"(GET /lume/vms/dev=200:{"name":"dev","os":)",
             "--fault",
             "GET /lume/vms=200:[x]"});
  LumeClient client(options_for(*sim));
  auto got = client.get("dev");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(
      shown(got.error()),
      "status of VM 'dev': Lume answered HTTP 200 with a body that is not valid JSON (it ends "
      "early, after 19 bytes): '{\"name\":\"dev\",\"os\":' | hint: check that --lume-url "
      "points at Lume 0.5.3 or newer (`lume --version`) | exit 3");
  EXPECT_EQ(client.list().error().message(),
            "list of VMs: Lume answered HTTP 200 with a body that is not valid JSON (error at byte "
            "2): '[x]'");
}

TEST(LumeClient, ANumberBeyondDoublesRangeIsAnErrorNotACrash) {
  START_SIM(sim, {"--fault", R"(GET /lume/vms=200:[{"cpuCount":1e99999}])"});
  LumeClient client(options_for(*sim));
  auto listed = client.list();
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().message(),
            "list of VMs: Lume answered HTTP 200 with JSON this client cannot hold "
            "(number overflow parsing '1e99999'): "
            "'[{\"cpuCount\":1e99999}]'");
}

TEST(LumeClient, WrongJsonTypesNameTheKey) {
  const std::string body =
      R"({"name":"dev","os":"linux","cpuCount":"4","memorySize":1,"diskSize":{"allocated":0,"total":1},)"
      R"("display":"1x1","status":"stopped","provisioningOperation":null,"vncUrl":null,"ipAddress":null,)"
      R"("sshAvailable":null,"locationName":"home","sharedDirectories":null,"networkMode":"nat","downloadProgress":null})";
  START_SIM(
      sim,
      {"--fault", "GET /lume/vms/dev=200:" + body, "--fault", R"(GET /lume/vms=200:{"vms":[]})"});
  LumeClient client(options_for(*sim));
  auto got = client.get("dev");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(shown(got.error()),
            "status of VM 'dev': unexpected answer from Lume: /cpuCount: expected a non-negative "
            "integer, got a string | hint: check that --lume-url points at Lume 0.5.3 or newer "
            "(`lume --version`) | exit 3");
  EXPECT_EQ(client.list().error().message(),
            "list of VMs: unexpected answer from Lume: /: expected an array, got an object");
}

TEST(LumeClient, UnknownRouteIsExplainedAsAWrongLumeOrUrl) {
  START_SIM(sim, {"--fault", "GET /lume/host/status=404"});
  LumeClient client(options_for(*sim));
  auto status = client.host_status();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(shown(status.error()),
            "host status: Lume answered HTTP 404 \"Not found\": the server at " + sim->url() +
                " has no route GET /lume/host/status | hint: check that --lume-url points at Lume "
                "0.5.3 or newer (`lume --version`) | exit 3");
}

/// Boots a fresh linux VM 'dev' with boot_vm (`vnc` as given) and answers its vncUrl.
std::optional<std::string> vnc_url_after_boot(const std::vector<std::string>& sim_args, bool vnc) {
  LoopbackListener sshd; // stands in for the guest's sshd
  std::vector<std::string> args = {"--create-delay-ms",
                                   "0",
                                   "--boot-delay-ms",
                                   "0",
                                   "--guest-address",
                                   "127.0.0.1",
                                   "--guest-ssh-port",
                                   std::to_string(sshd.port())};
  args.insert(args.end(), sim_args.begin(), sim_args.end());
  auto sim = start_sim(args);
  EXPECT_TRUE(sim->started()) << sim->failure();
  LumeClient client(options_for(*sim));
  EXPECT_TRUE(client.create(linux_vm("dev")).ok());
  EXPECT_TRUE(wait_until(client, "dev", is_stopped, quick_wait("VM 'dev'")).ok());
  auto booted = boot_vm(client, "dev", 10s, nullptr, {}, vnc);
  EXPECT_TRUE(booted.ok()) << booted.error().message();
  EXPECT_THAT(sim->process().stderr_text(), HasSubstr("POST /lume/vms/dev/run -> 202"));
  return std::get<VmDetails>(client.get("dev").value()).vnc_url;
}

TEST(LumeClient, AHeadlessBootLeavesNoVncListenerOnLumeMain) {
  EXPECT_EQ(vnc_url_after_boot({}, false), std::nullopt);
  // A recipe's vm.display: vnc keeps Lume's listener.
  auto kept = vnc_url_after_boot({}, true);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->rfind("vnc://:", 0), 0u) << *kept;
}

TEST(LumeClient, Lume053IgnoresVncDisabledSoAHeadlessBootStillListens) {
  auto url = vnc_url_after_boot({"--lume-version", "0.5.3"}, false);
  ASSERT_TRUE(url.has_value()) << "0.5.3's decoder ignores the vnc key";
  EXPECT_EQ(url->rfind("vnc://:", 0), 0u) << *url;
}

TEST(LumeClient, StorageGoesIntoTheQueryOnlyOnNameTerminatedRoutes) {
  START_SIM(sim, {"--create-delay-ms", "0"});
  LumeClient client(options_for(*sim));
  const std::string direct = sim->home() + "/../other place";
  CreateRequest r = linux_vm("dev");
  r.storage = direct;
  ASSERT_TRUE(client.create(r).ok());
  ASSERT_TRUE(wait_until(client, VmRef("dev", direct), is_stopped, quick_wait("VM 'dev'")).ok());
  auto got = client.get(VmRef("dev", direct));
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_EQ(std::get<VmDetails>(got.value()).location_name, direct);
  ASSERT_TRUE(client.run(VmRef("dev", direct), {}).ok());
  EXPECT_EQ(status_of(client.get(VmRef("dev", direct)).value()), VmStatus::running);
  ASSERT_TRUE(client.stop(VmRef("dev", direct)).ok());
  ASSERT_TRUE(client.remove(VmRef("dev", direct)).ok());
  const std::string log = sim->process().stderr_text();
  EXPECT_THAT(log, HasSubstr("GET /lume/vms/dev?storage=%2F"));
  EXPECT_THAT(log, HasSubstr("POST /lume/vms/dev/run -> 202"));
  EXPECT_THAT(log, HasSubstr("POST /lume/vms/dev/stop -> 200"));
}

TEST(LumeClient, VmThatDisappearsWhileAwaitedIsAClearError) {
  START_SIM(sim, {"--create-delay-ms", "500"});
  LumeClient client(options_for(*sim));
  CreateRequest r = linux_vm("mac");
  r.os = "macOS";
  r.ipsw = "/nonexistent/restore.ipsw"; // the background install fails and deletes the VM
  ASSERT_TRUE(client.create(r).ok());
  auto waited =
      wait_until(client, "mac", is_stopped, quick_wait("VM 'mac' to finish provisioning"));
  ASSERT_FALSE(waited.ok());
  EXPECT_EQ(
      shown(waited.error()),
      "waiting for VM 'mac' to finish provisioning: VM 'mac' disappeared (Lume no longer knows "
      "it; last seen provisioning) | hint: a failed create or pull deletes the VM; see Lume's "
      "log (/tmp/lume_daemon.log when started at login) | exit 3");
}

TEST(LumeClient, CreateStuckInProvisioningTimesOutWithTheLastStatus) {
  START_SIM(sim, {"--create-delay-ms", "60000"});
  LumeClient client(options_for(*sim));
  ASSERT_TRUE(client.create(linux_vm("slow")).ok());
  const auto started = std::chrono::steady_clock::now();
  auto waited =
      wait_until(client, "slow", is_stopped, quick_wait("VM 'slow' to finish provisioning", 800ms));
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(waited.ok());
  EXPECT_EQ(shown(waited.error()),
            "waiting for VM 'slow' to finish provisioning: gave up after 0.8 s; last status: "
            "provisioning | hint: check the VM with `lume ls`; if it is still working, wait longer "
            "| exit 3");
  EXPECT_GE(took, 800ms);
  EXPECT_LT(took, 3s);
  EXPECT_LT(client.request_count(), 40u) << "polling backs off instead of busy-looping";
}

TEST(LumeClient, FailedAsyncPullEndsTheWaitWithLumesMessage) {
  START_SIM(sim, {"--pull-delay-ms", "1000"});
  LumeClient client(options_for(*sim));
  PullRequest pull;
  pull.image = "macos-tahoe:latest";
  pull.name = "base";
  ASSERT_TRUE(client.pull_start(pull).ok());
  auto first = client.get("base");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(std::holds_alternative<PullProgress>(first.value()));
  auto waited = wait_until(client, "base", is_pull_finished, quick_wait("pull of 'base'"));
  ASSERT_FALSE(waited.ok());
  EXPECT_EQ(waited.error().message(),
            "waiting for pull of 'base': status of VM 'base': Lume answered HTTP 400: Pull failed "
            "for 'base': Failed to fetch image manifest from registry.");
  auto sync = client.pull(pull);
  EXPECT_EQ(sync.error().message(),
            "pull of 'macos-tahoe:latest' into VM 'base': Lume answered "
            "HTTP 400: Failed to fetch image manifest from registry.");
}

TEST(LumeClient, PushIsAccepted) {
  START_SIM(sim);
  LumeClient client(options_for(*sim));
  PushRequest push;
  push.name = "dev";
  push.image_name = "tahoe-unlocked";
  push.tags = {"1", "latest"};
  auto pushed = client.push(push);
  EXPECT_TRUE(pushed.ok()) << pushed.error().message();
}

} // namespace
} // namespace lume_unlock::lume

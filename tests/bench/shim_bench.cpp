// Benchmarks of the Metal capability shim on the emulated device (Linux, GNU libobjc):
//  - supportsFamily: through ObjC dispatch, stock vs hooked (a family the policy answers itself,
//    1007, and one it forwards to the original, 3003), and maxThreadgroupMemoryLength;
//  - the pure activation decision;
//  - load/activation cost: the probe process with and without the shim in LD_PRELOAD.
// The stock benchmarks must run before the hooked ones (registration order): hooking is for good.
#include "policy/policy.hpp"
#include "shim_dispatch.h"

#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <string>
#include <vector>

extern char** environ;

// Under LUME_UNLOCK_SANITIZE: the emulated devices benchmarked here live as long as the process
// and GNU libobjc never frees its runtime tables, so a leak report says nothing about
// lume-unlock. Memory errors are still reported.
extern "C" const char* __lsan_default_options() {
  return "detect_leaks=0";
}

namespace {

void* device() {
  static void* d = bench_new_paravirtual_device();
  return d;
}

void supports_family(benchmark::State& state, bool hooked) {
  void* d = device();
  if (hooked && !bench_device_is_hooked(d) && !bench_hook_device(d, 1009)) {
    state.SkipWithError("could not hook the emulated device");
    return;
  }
  if (!hooked && bench_device_is_hooked(d)) {
    state.SkipWithError("the device is already hooked: run the stock benchmarks first");
    return;
  }
  const long family = state.range(0);
  for (auto _ : state)
    benchmark::DoNotOptimize(bench_supports_family(d, family));
}

void BM_SupportsFamilyStock(benchmark::State& state) {
  supports_family(state, false);
}
void BM_MaxThreadgroupMemoryStock(benchmark::State& state) {
  void* d = device();
  for (auto _ : state)
    benchmark::DoNotOptimize(bench_max_threadgroup_memory(d));
}
void BM_SupportsFamilyHooked(benchmark::State& state) {
  supports_family(state, true);
}
void BM_MaxThreadgroupMemoryHooked(benchmark::State& state) {
  void* d = device();
  if (!bench_device_is_hooked(d))
    bench_hook_device(d, 1009);
  for (auto _ : state)
    benchmark::DoNotOptimize(bench_max_threadgroup_memory(d));
}

void BM_PolicyDecideWithGuard(benchmark::State& state) {
  using namespace lume_unlock::policy;
  const std::string guard = "# enabled\n/opt/a/bin/tool\n/opt/llama/bin/llama-server\n";
  ActivationInput in;
  in.env.apple_family_max = "1009";
  in.env.max_threadgroup_memory = "65536";
  in.env.enablement = "/guard";
  in.guard_text = guard;
  in.executable_path = "/opt/llama/bin/llama-server";
  for (auto _ : state)
    benchmark::DoNotOptimize(decide(in));
}

// Runs the probe once; adds the child's user+system CPU time (robust against a busy machine,
// unlike wall time) to *cpu_us.
int run_probe(bool with_shim, double* cpu_us) {
  std::vector<std::string> env_strings = {"PATH=/usr/bin:/bin", "LUME_METAL_APPLE_FAMILY_MAX=1009"};
  if (with_shim)
    env_strings.push_back(std::string("LD_PRELOAD=") + LUME_UNLOCK_BENCH_SHIM);
  std::vector<char*> env;
  for (std::string& e : env_strings)
    env.push_back(e.data());
  env.push_back(nullptr);
  std::string probe = LUME_UNLOCK_BENCH_PROBE;
  std::string json = "--json";
  char* argv[] = {probe.data(), json.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  int status = -1;
  struct rusage usage {};
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv, env.data()) == 0)
    wait4(pid, &status, 0, &usage);
  *cpu_us += (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + usage.ru_utime.tv_usec +
             usage.ru_stime.tv_usec;
  posix_spawn_file_actions_destroy(&actions);
  return status;
}

void BM_ProbeProcess(benchmark::State& state) {
  const bool with_shim = state.range(0) != 0;
  double cpu_us = 0;
  for (auto _ : state) {
    if (run_probe(with_shim, &cpu_us) != 0) {
      state.SkipWithError("the probe failed");
      return;
    }
  }
  state.counters["child_cpu_us"] = benchmark::Counter(cpu_us, benchmark::Counter::kAvgIterations);
}

} // namespace

BENCHMARK(BM_SupportsFamilyStock)->Arg(1007)->Arg(3003);
BENCHMARK(BM_MaxThreadgroupMemoryStock);
BENCHMARK(BM_SupportsFamilyHooked)->Arg(1007)->Arg(3003);
BENCHMARK(BM_MaxThreadgroupMemoryHooked);
BENCHMARK(BM_PolicyDecideWithGuard);
BENCHMARK(BM_ProbeProcess)->ArgName("with_shim")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();

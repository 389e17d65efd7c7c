#include "cli/host_bench.hpp"

#include "apply/llama_runs.hpp"
#include "util/atomic_file.hpp"
#include "util/text_check.hpp"

#ifdef __APPLE__
#include "guest/shell_quote.hpp"

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#endif

namespace lume_unlock::cli {

Result<HostBench> read_host_bench(const std::string& path) {
  auto text = util::read_input_file(path, verify::k_max_llama_bench_bytes, "the host's JSON");
  if (!text.ok()) {
    return Error(ErrorCategory::usage,
                 "bench --host-json " + util::quote_for_message(path),
                 text.error().message(),
                 "run 'llama-bench -m MODEL -p 512 -n 128 -o json > host.json' on the host and "
                 "pass that file");
  }
  auto parsed = verify::parse_llama_bench_json(text.value(), util::quote_for_message(path));
  if (!parsed.ok()) {
    return Error(ErrorCategory::usage,
                 "bench --host-json " + util::quote_for_message(path),
                 parsed.error().why(),
                 parsed.error().hint());
  }
  return HostBench{std::move(text.value()), std::move(parsed.value())};
}

Result<HostPerplexity> read_host_perplexity(const std::string& path) {
  const std::string what = "bench --host-perplexity " + util::quote_for_message(path);
  const std::string hint =
      "run 'llama-perplexity -m MODEL -f share/lume-unlock/perplexity-text.txt -c " +
      std::to_string(verify::k_perplexity_context) + " -b " +
      std::to_string(verify::k_perplexity_batch) +
      " > host-perplexity.txt 2>&1' on the host (the text installed with lume-unlock) and pass "
      "that file";
  auto text = util::read_input_file(path, 1 << 20, "the host's llama-perplexity output");
  if (!text.ok()) {
    return Error(ErrorCategory::usage, what, text.error().message(), hint);
  }
  auto run = verify::parse_llama_perplexity(text.value(), text.value());
  if (!run.estimate) {
    return Error(ErrorCategory::usage, what, "it has no 'Final estimate: PPL = …' line", hint);
  }
  return HostPerplexity{std::move(text.value()), std::move(run)};
}

Result<HostBench> run_host_bench(const verify::BenchRequest& request) {
#ifdef __APPLE__
  struct stat info {};
  if (::stat(request.model.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return Error(ErrorCategory::usage,
                 "bench --host-run",
                 "the model " + util::quote_for_message(request.model) +
                     " is not a file on this Mac (--host-run reads it at the guest's path)",
                 "put the model at the same path on the host, or pass the host's JSON with "
                 "--host-json FILE");
  }
  std::vector<std::string> argv = {"llama-bench"};
  const auto arguments = apply::llama_bench_arguments(request);
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  LUME_UNLOCK_TRY_ASSIGN(auto command, guest::shell_join(argv));
  FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) {
    return Error(ErrorCategory::usage, "bench --host-run", "could not start llama-bench");
  }
  std::string output;
  char buffer[4096];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0 &&
         output.size() <= verify::k_max_llama_bench_bytes) {
    output.append(buffer, got);
  }
  const int status = ::pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Error(ErrorCategory::usage,
                 "bench --host-run",
                 "llama-bench on the host failed (exit status " +
                     std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")",
                 "check that llama-bench is on PATH and runs the model; or pass --host-json FILE");
  }
  LUME_UNLOCK_TRY_ASSIGN(auto tests, verify::parse_llama_bench_json(output, "the host run"));
  return HostBench{std::move(output), std::move(tests)};
#else
  (void)request;
  return Error(ErrorCategory::usage,
               "bench --host-run",
               "it runs llama-bench on the host, which must be the Mac that runs the VM; this is "
               "not macOS",
               "run llama-bench on the Mac yourself ('llama-bench -m MODEL -p 512 -n 128 -o "
               "json > host.json') and pass --host-json host.json");
#endif
}

} // namespace lume_unlock::cli

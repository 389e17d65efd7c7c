#include "cli/host_bench.hpp"

#include "apply/llama_runs.hpp"
#include "util/atomic_file.hpp"
#include "util/child_process.hpp"
#include "util/text_check.hpp"

#include <filesystem>

namespace lume_unlock::cli {

namespace {

#ifdef __APPLE__
constexpr bool k_macos = true;
#else
constexpr bool k_macos = false;
#endif

const char* const k_host_json_command = "llama-bench -m MODEL -p 512 -n 128 -o json > host.json";

} // namespace

void read_host_bench(pipeline::BenchOptions& bench,
                     const std::string& path,
                     const std::string& what,
                     const std::string& source) {
  auto text = util::read_input_file(path, verify::k_max_llama_bench_bytes, "the host's JSON");
  if (!text.ok()) {
    throw Error(ErrorCategory::usage,
                what,
                text.error().message(),
                std::string("run '") + k_host_json_command + "' on the host and pass that file");
  }
  auto tests = verify::parse_llama_bench_json(text.value(), util::quote_for_message(path));
  if (!tests.ok()) {
    throw Error(ErrorCategory::usage, what, tests.error().why(), tests.error().hint());
  }
  bench.host = std::move(tests.value());
  bench.host_json = std::move(text.value());
  bench.host_source = source;
}

void read_host_perplexity(pipeline::BenchOptions& bench,
                          const std::string& path,
                          const std::string& what) {
  const std::string hint =
      "run 'llama-perplexity -m MODEL -f share/lume-unlock/perplexity-text.txt -c " +
      std::to_string(verify::k_perplexity_context) + " -b " +
      std::to_string(verify::k_perplexity_batch) +
      " > host-perplexity.txt 2>&1' on the host (the text installed with lume-unlock) and pass "
      "that file";
  auto text = util::read_input_file(path, 1 << 20, "the host's llama-perplexity output");
  if (!text.ok()) {
    throw Error(ErrorCategory::usage, what, text.error().message(), hint);
  }
  auto run = verify::parse_llama_perplexity(text.value(), text.value());
  if (!run.estimate) {
    throw Error(ErrorCategory::usage, what, "it has no 'Final estimate: PPL = …' line", hint);
  }
  bench.host_perplexity = std::move(run);
  bench.host_perplexity_output = std::move(text.value());
}

void run_host_bench(pipeline::BenchOptions& bench) {
  const verify::BenchRequest& request = bench.request;
  if (!k_macos) {
    throw Error(ErrorCategory::usage,
                "bench --host-run",
                "it runs llama-bench on the host, which must be the Mac that runs the VM; this "
                "is not macOS",
                std::string("run llama-bench on the Mac yourself ('") + k_host_json_command +
                    "') and pass --host-json host.json");
  }
  std::error_code error;
  if (!std::filesystem::is_regular_file(request.model, error)) {
    throw Error(ErrorCategory::usage,
                "bench --host-run",
                "the model " + util::quote_for_message(request.model) +
                    " is not a file on this Mac (--host-run reads it at the guest's path)",
                "put the model at the same path on the host, or pass the host's JSON with "
                "--host-json FILE");
  }
  // env finds llama-bench on PATH; run_child runs no shell.
  std::vector<std::string> argv = {"/usr/bin/env", "llama-bench"};
  const auto arguments = apply::llama_bench_arguments(request);
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  util::ChildOutcome ran = util::run_child(argv).value_or_throw();
  if (ran.exit_status != 0) {
    throw Error(ErrorCategory::usage,
                "bench --host-run",
                "llama-bench on the host failed (exit status " + std::to_string(ran.exit_status) +
                    ")",
                "check that llama-bench is on PATH and runs the model; or pass --host-json FILE");
  }
  bench.host = verify::parse_llama_bench_json(ran.stdout_text, "the host run").value_or_throw();
  bench.host_json = std::move(ran.stdout_text);
  bench.host_source = "--host-run";
}

std::string bench_log_lines(const pipeline::BenchOutcome& outcome) {
  return std::string("unlocked run's Metal log: ") +
         verify::verdict_name(outcome.unlocked_log.verdict) +
         " (stock run: " + verify::verdict_name(outcome.stock_log.verdict) + ")\n" +
         apply::k_llama_bench_verbose_note + "\n";
}

} // namespace lume_unlock::cli

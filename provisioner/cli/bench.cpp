#include "pipeline/bench.hpp"

#include "cli/commands.hpp"
#include "cli/host_bench.hpp"
#include "cli/progress_renderer.hpp"
#include "util/text_check.hpp"

#include <memory>
#include <string>

namespace lume_unlock::cli {

namespace {

struct BenchCommandOptions {
  pipeline::BenchOptions bench;
  std::string host_json;
  std::string host_perplexity;
  std::string max_perplexity_drift;
  bool host_run = false;
  std::string min_speedup;
  std::string min_host_ratio;
  guest::ConnectionOptions connection;
};

int run_bench_command(BenchCommandOptions& options, Context& context) {
  pipeline::BenchOptions& bench = options.bench;
  if (!options.min_speedup.empty()) {
    bench.thresholds.min_speedup =
        verify::parse_min_speedup(options.min_speedup, "bench --min-speedup").value_or_throw();
  }
  if (!options.min_host_ratio.empty()) {
    bench.thresholds.min_host_ratio =
        verify::parse_min_host_ratio(options.min_host_ratio, "bench --min-host-ratio")
            .value_or_throw();
  }
  if (!options.max_perplexity_drift.empty()) {
    bench.max_perplexity_drift =
        verify::parse_perplexity_drift(options.max_perplexity_drift, "bench --max-perplexity-drift")
            .value_or_throw();
  }
  bench.max_perplexity_drift_name = "--max-perplexity-drift";
  if (!options.host_perplexity.empty()) {
    read_host_perplexity(bench,
                         options.host_perplexity,
                         "bench --host-perplexity " +
                             util::quote_for_message(options.host_perplexity));
  }
  // The host's figures come first: a bad file or a refused --host-run costs no guest run.
  if (!options.host_json.empty()) {
    read_host_bench(bench,
                    options.host_json,
                    "bench --host-json " + util::quote_for_message(options.host_json),
                    "--host-json " + options.host_json);
  } else if (options.host_run) {
    context.note("running llama-bench on the host");
    run_host_bench(bench);
  }
  bench.state_dir = context.global.state_dir;
  const auto lock = context.lock_vm(bench.vm, "bench");
  auto session = context.open_guest(bench.vm, options.connection);
  ProgressRenderer renderer(context);
  const pipeline::BenchOutcome outcome =
      pipeline::run_bench(*session, bench, renderer.callback()).value_or_throw();
  context.debug_counts(session->command_count());

  if (context.json()) {
    nlohmann::json doc = outcome.record;
    doc["vm"] = bench.vm;
    context.print_json(doc);
  } else {
    context.out << "llama-bench in VM '" << bench.vm << "'";
    if (outcome.record.contains("model_type")) {
      context.out << ", " << outcome.record["model_type"].get<std::string>();
    }
    if (outcome.record.contains("build_commit")) {
      context.out << ", llama.cpp " << outcome.record["build_commit"].get<std::string>();
    }
    if (outcome.record.contains("host_chip")) {
      context.out << ", host " << outcome.record["host_chip"].get<std::string>();
    }
    context.out << "\n" << verify::render_bench_table(outcome.rows);
    const std::string perplexity = verify::perplexity_phrase(outcome.record["perplexity"]);
    context.out << (perplexity.empty() ? "perplexity: no figure" : perplexity) << "\n";
    context.out << bench_log_lines(outcome);
  }
  if (outcome.unlocked_log.verdict == verify::LlamaLogVerdict::no_metal_log) {
    context.warn("the unlocked run printed no Metal init lines, so whether the shim was active is "
                 "not known from its log");
  }
  if (!outcome.failures.empty()) {
    for (const std::string& failure : outcome.failures) {
      context.err << "lume-unlock: bench failed: " << util::display_text(failure) << "\n";
    }
    return exit_code(ErrorCategory::verification);
  }
  return 0;
}

} // namespace

void register_bench(CLI::App& app, Context& context) {
  auto options = std::make_shared<BenchCommandOptions>();
  auto* command = app.add_subcommand(
      "bench", "Measure the speedup in the guest with llama-bench, record it and gate on it");
  command->footer(
      "Runs the enabled llama-bench entry twice with '-o json -v': stock (the shim's injection\n"
      "variable unset) and unlocked (exactly its agent's environment, as 'exec' does). Prints\n"
      "test, stock t/s, unlocked t/s and speedup (and host t/s and % of host with --host-json\n"
      "or --host-run), classifies the unlocked run's Metal log like 'inspect-log', and records\n"
      "everything in the VM's provenance record (guest and host; 'status' shows it). -v lets\n"
      "ggml-metal's failure lines reach stderr (llama-bench silences ggml without it). Exits 6\n"
      "when a threshold is missed or the unlocked run's log says broken, shim-inactive, stock\n"
      "or unsafe-profile, naming each figure that fell short and Metal's failure line. Then runs\n"
      "the llama-perplexity entry on a fixed text, on the CPU (-ngl 0) and unlocked on the GPU,\n"
      "same -c/-b: exits 6 when the GPU's perplexity drifts from the CPU's by more than\n"
      "--max-perplexity-drift, or a run prints no 'Final estimate'.");
  command->add_option("name", options->bench.vm, "The Lume VM")->required();
  command->add_option("--model", options->bench.request.model, "The model file's path in the guest")
      ->required();
  command->add_option("--entry", options->bench.entry, "The enablement entry that runs llama-bench")
      ->capture_default_str();
  command->add_option("-p,--n-prompt", options->bench.request.prompt, "Prompt tokens (pp test)")
      ->capture_default_str()
      ->check(CLI::Range(1, verify::k_max_bench_tokens));
  command->add_option("-n,--n-gen", options->bench.request.gen, "Generated tokens (tg test)")
      ->capture_default_str()
      ->check(CLI::Range(1, verify::k_max_bench_tokens));
  command->add_option("-r,--repetitions", options->bench.request.repetitions, "Repetitions")
      ->capture_default_str()
      ->check(CLI::Range(1, verify::k_max_bench_repetitions));
  // -t and -ngl as llama-bench spells them long (CLI11 takes one-letter short names only), so
  // the published command (-t 8 -ngl -1, docs/sources.md) can be asked for here too.
  command->add_option("-t,--threads", options->bench.request.threads, "Threads (llama-bench -t)")
      ->check(CLI::Range(1, verify::k_max_bench_threads));
  command
      ->add_option("--n-gpu-layers",
                   options->bench.request.gpu_layers,
                   "Layers on the GPU (llama-bench -ngl; -1: all of them)")
      ->check(CLI::Range(-1, verify::k_max_bench_gpu_layers));
  auto* host_json = command->add_option("--host-json",
                                        options->host_json,
                                        "The host's 'llama-bench -o json' output, to compare with");
  auto* host_run = command->add_flag(
      "--host-run", options->host_run, "Run llama-bench on this Mac too (macOS only)");
  host_json->excludes(host_run);
  command->add_option("--host-perplexity",
                      options->host_perplexity,
                      "The host's llama-perplexity output (2>&1) on the shipped text");
  command
      ->add_option("--perplexity-entry",
                   options->bench.perplexity_entry,
                   "The enablement entry that runs llama-perplexity")
      ->capture_default_str();
  command->add_option("--max-perplexity-drift",
                      options->max_perplexity_drift,
                      "Fail (exit 6) when the GPU's perplexity drifts further from the CPU's "
                      "(default 0.02: 2%)");
  command->add_option("--min-speedup", options->min_speedup, "Fail (exit 6) below this speedup");
  command->add_option("--min-host-ratio",
                      options->min_host_ratio,
                      "Fail (exit 6) below these shares of host, e.g. pp=0.95,tg=0.70");
  add_connection_options(*command, options->connection);
  command->callback(
      [options, &context] { context.exit_status = run_bench_command(*options, context); });
}

} // namespace lume_unlock::cli

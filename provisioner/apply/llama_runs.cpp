#include "apply/llama_runs.hpp"

#include "enablement/enablement_plan.hpp"
#include "guest/shell_quote.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"
#include "verify/bench.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

namespace lume_unlock::apply {

namespace {

/// "cd / && [unset VAR && ]K='v' … 'program' 'arg' …". Assignments before the command reach the
/// program's environment only; and unlike env(1), the shell never takes a program path that
/// holds '=' for one more assignment.
Result<std::string> command_line(const std::optional<std::string>& unset,
                                 const std::map<std::string, std::string>& environment,
                                 const enablement::EnablementEntry& entry,
                                 const std::vector<std::string>& extra_args) {
  std::string line = "cd / && ";
  if (unset) {
    LUME_UNLOCK_TRY(guest::require_shell_name(*unset));
    line += "unset " + *unset + " && ";
  }
  for (const auto& [key, value] : environment) {
    LUME_UNLOCK_TRY(guest::require_shell_name(key));
    LUME_UNLOCK_TRY_ASSIGN(auto quoted, guest::shell_quote(value));
    line += key + "=" + quoted + " ";
  }
  std::vector<std::string> argv = {entry.program};
  argv.insert(argv.end(), entry.args.begin(), entry.args.end());
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  LUME_UNLOCK_TRY_ASSIGN(auto command, guest::shell_join(argv));
  return line + command;
}

/// The last `count` non-empty lines of `text`, joined with "; ".
std::string last_lines(const std::string& text, std::size_t count) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      lines.push_back(line);
    }
  }
  lines.erase(lines.begin(), lines.end() - static_cast<long>(std::min(count, lines.size())));
  return lines.empty() ? "it printed nothing on stderr" : util::join(lines, "; ");
}

/// Runs `command`, reporting the elapsed seconds once a second from a helper thread while the
/// session blocks.
Result<guest::CommandResult> run_reporting(guest::GuestSession& session,
                                           const std::string& command,
                                           const std::string& label,
                                           const util::ProgressCallback& progress) {
  if (!progress) {
    return session.run(command);
  }
  const auto started = std::chrono::steady_clock::now();
  const auto report = [&](const std::string& detail, bool finished) {
    progress(util::ProgressEvent{"bench", std::nullopt, std::nullopt, "", detail, finished});
  };
  const auto seconds = [&] {
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::steady_clock::now() - started)
                              .count()) +
           " s";
  };
  std::mutex mutex;
  std::condition_variable wake;
  bool done = false;
  report(label, false);
  std::thread ticker([&] {
    std::unique_lock<std::mutex> lock(mutex);
    while (!wake.wait_for(lock, std::chrono::seconds(1), [&] { return done; })) {
      report(label + ", " + seconds(), false);
    }
  });
  auto result = session.run(command);
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  wake.notify_all();
  ticker.join();
  report(label + " done in " + seconds(), true);
  return result;
}

/// The error of a run that exited non-zero (nothing for exit 0): a verdict when its Metal log is
/// broken, else a guest fault quoting its last stderr lines.
std::optional<Error> failed_run(const std::string& what,
                                const guest::CommandResult& ran,
                                const verify::LlamaLogReport& log,
                                const std::string& entry_name) {
  if (ran.exit_status == 0) {
    return std::nullopt;
  }
  if (log.verdict == verify::LlamaLogVerdict::broken) {
    // Metal failed and the program gave up: a verdict, not a guest fault.
    return Error(ErrorCategory::verification,
                 what,
                 "its Metal log is broken: " +
                     (log.reasons.size() > 1 ? log.reasons[1] : log.reasons.front()),
                 "see the whole log with 'lume-unlock exec VM " + entry_name +
                     " -- ARGS 2> llama.stderr' and 'lume-unlock inspect-log llama.stderr'");
  }
  return Error(ErrorCategory::guest,
               what,
               (ran.exit_status < 0 ? std::string("it ended without an exit status")
                                    : "it exited with status " + std::to_string(ran.exit_status)) +
                   ": " + last_lines(ran.stderr_text, 3),
               "run it by hand with 'lume-unlock exec VM " + entry_name +
                   " -- ARGS' to see its whole output");
}

Result<BenchSide> run_side(guest::GuestSession& session,
                           const std::string& command,
                           const std::string& side,
                           const enablement::EnablementEntry& entry,
                           bool expect_shim,
                           const util::ProgressCallback& progress) {
  const std::string what =
      "llama-bench " + side + " run of entry " + util::quote_for_message(entry.name);
  LUME_UNLOCK_TRY_ASSIGN(auto ran, run_reporting(session, command, side + " run", progress));
  verify::LlamaLogOptions options;
  options.expect_shim = expect_shim;
  verify::LlamaLogReport log = verify::classify_llama_log(ran.stderr_text, options);
  if (auto failed = failed_run(what, ran, log, entry.name)) {
    return *failed;
  }
  BenchSide out;
  auto parsed = verify::parse_llama_bench_json(ran.stdout_text, "the " + side + " run");
  if (!parsed.ok()) {
    return parsed.error().with_context(what);
  }
  out.tests = std::move(parsed.value());
  out.stdout_text = std::move(ran.stdout_text);
  out.stderr_text = std::move(ran.stderr_text);
  out.log = std::move(log);
  return out;
}

Result<PerplexitySide> run_side(guest::GuestSession& session,
                                const std::string& command,
                                const std::string& side,
                                const enablement::EnablementEntry& entry,
                                const util::ProgressCallback& progress) {
  LUME_UNLOCK_TRY_ASSIGN(auto ran,
                         run_reporting(session, command, "perplexity " + side + " run", progress));
  const std::string what =
      "llama-perplexity " + side + " run of entry " + util::quote_for_message(entry.name);
  // llama-perplexity prints ggml-metal's lines raw on stderr: a run that Metal broke is a verdict.
  PerplexitySide out;
  out.log = verify::classify_llama_log(ran.stderr_text, verify::LlamaLogOptions{});
  if (auto failed = failed_run(what, ran, out.log, entry.name)) {
    return *failed;
  }
  out.run = verify::parse_llama_perplexity(ran.stdout_text, ran.stderr_text);
  out.stdout_text = std::move(ran.stdout_text);
  out.stderr_text = std::move(ran.stderr_text);
  return out;
}

std::vector<std::string> llama_perplexity_arguments(const verify::BenchRequest& request,
                                                    const std::string& text_path,
                                                    bool gpu) {
  std::vector<std::string> args = {"-m",
                                   request.model,
                                   "-f",
                                   text_path,
                                   "-c",
                                   std::to_string(verify::k_perplexity_context),
                                   "-b",
                                   std::to_string(verify::k_perplexity_batch)};
  if (request.threads) {
    args.insert(args.end(), {"-t", std::to_string(*request.threads)});
  }
  // 999: more layers than any model has, every layer on the GPU (a number every release reads).
  args.insert(args.end(), {"-ngl", gpu ? "999" : "0"});
  return args;
}

} // namespace

Result<std::string> exec_command_line(const enablement::EnablementEntry& entry,
                                      const EnablementTarget& target,
                                      const std::vector<std::string>& extra_args) {
  LUME_UNLOCK_TRY_ASSIGN(const auto environment,
                         enablement::agent_environment(entry, target.layout, target.settings));
  return command_line(std::nullopt, environment, entry, extra_args);
}

Result<std::string> stock_command_line(const enablement::EnablementEntry& entry,
                                       const EnablementTarget& target,
                                       const std::vector<std::string>& extra_args) {
  // The same validation as the agent's environment, so both sides refuse the same entries.
  LUME_UNLOCK_TRY(enablement::agent_environment(entry, target.layout, target.settings));
  return command_line(target.settings.inject_variable, entry.env, entry, extra_args);
}

std::vector<std::string> llama_bench_arguments(const verify::BenchRequest& request) {
  std::vector<std::string> args = {"-m", request.model};
  const auto flags = verify::llama_bench_flags(request);
  args.insert(args.end(), flags.begin(), flags.end());
  return args;
}

Result<GuestBench> run_guest_bench(guest::GuestSession& session,
                                   const enablement::EnablementEntry& entry,
                                   const EnablementTarget& target,
                                   const verify::BenchRequest& request,
                                   const util::ProgressCallback& progress) {
  LUME_UNLOCK_TRY_ASSIGN(const auto model, guest::shell_quote(request.model));
  LUME_UNLOCK_TRY_ASSIGN(auto found, session.run("test -f " + model + " && test -r " + model));
  if (found.exit_status != 0) {
    return Error(ErrorCategory::usage,
                 "bench of entry " + util::quote_for_message(entry.name),
                 "model " + util::quote_for_message(request.model) +
                     " is not a readable file in the guest",
                 "give the model's absolute path inside the guest with --model");
  }
  auto arguments = llama_bench_arguments(request);
  arguments.push_back(k_llama_bench_verbose);
  LUME_UNLOCK_TRY_ASSIGN(const auto stock, stock_command_line(entry, target, arguments));
  LUME_UNLOCK_TRY_ASSIGN(const auto unlocked, exec_command_line(entry, target, arguments));
  GuestBench out;
  LUME_UNLOCK_TRY_ASSIGN(out.stock, run_side(session, stock, "stock", entry, false, progress));
  LUME_UNLOCK_TRY_ASSIGN(out.unlocked,
                         run_side(session, unlocked, "unlocked", entry, true, progress));
  return out;
}

Result<GuestPerplexity> run_guest_perplexity(guest::GuestSession& session,
                                             const enablement::EnablementEntry& entry,
                                             const EnablementTarget& target,
                                             const std::string& home,
                                             const verify::BenchRequest& request,
                                             const util::ProgressCallback& progress) {
  // upload() makes the folder when it is missing (one command, the first time only).
  const std::string path = home + "/" + verify::k_perplexity_text_guest_path;
  LUME_UNLOCK_TRY(session.upload(verify::perplexity_text(), path, 0644));
  LUME_UNLOCK_TRY_ASSIGN(
      const auto stock,
      stock_command_line(entry, target, llama_perplexity_arguments(request, path, false)));
  LUME_UNLOCK_TRY_ASSIGN(
      const auto unlocked,
      exec_command_line(entry, target, llama_perplexity_arguments(request, path, true)));
  GuestPerplexity out;
  LUME_UNLOCK_TRY_ASSIGN(out.stock, run_side(session, stock, "stock", entry, progress));
  LUME_UNLOCK_TRY_ASSIGN(out.unlocked, run_side(session, unlocked, "unlocked", entry, progress));
  return out;
}

} // namespace lume_unlock::apply

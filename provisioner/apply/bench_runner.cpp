#include "apply/bench_runner.hpp"

#include "apply/exec_command.hpp"
#include "guest/shell_quote.hpp"
#include "util/text_check.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace lume_unlock::apply {

/// The last `count` non-empty lines of `text`, joined with "; ".
std::string last_lines(const std::string& text, std::size_t count) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      end = text.size();
    }
    if (end > start) {
      lines.push_back(text.substr(start, end - start));
    }
    start = end + 1;
  }
  std::string out;
  for (std::size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i) {
    out += (out.empty() ? "" : "; ") + lines[i];
  }
  return out.empty() ? "it printed nothing on stderr" : out;
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
  std::mutex mutex;
  std::condition_variable wake;
  bool done = false;
  const auto started = std::chrono::steady_clock::now();
  progress(util::ProgressEvent{"bench", std::nullopt, std::nullopt, "", label, false});
  std::thread ticker([&] {
    std::unique_lock<std::mutex> lock(mutex);
    while (!wake.wait_for(lock, std::chrono::seconds(1), [&] { return done; })) {
      const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::steady_clock::now() - started)
                               .count();
      progress(util::ProgressEvent{"bench",
                                   std::nullopt,
                                   std::nullopt,
                                   "",
                                   label + ", " + std::to_string(seconds) + " s",
                                   false});
    }
  });
  auto result = session.run(command);
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  wake.notify_all();
  ticker.join();
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started)
          .count();
  progress(util::ProgressEvent{"bench",
                               std::nullopt,
                               std::nullopt,
                               "",
                               label + " done in " + std::to_string(seconds) + " s",
                               true});
  return result;
}

namespace {

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

} // namespace

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

} // namespace lume_unlock::apply

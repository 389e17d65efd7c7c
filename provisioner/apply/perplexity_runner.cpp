#include "apply/perplexity_runner.hpp"

#include "apply/bench_runner.hpp"
#include "apply/exec_command.hpp"
#include "guest/shell_quote.hpp"
#include "util/text_check.hpp"
#include "verify/perplexity.hpp"

namespace lume_unlock::apply {

namespace {

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

} // namespace

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

Result<GuestPerplexity> run_guest_perplexity(guest::GuestSession& session,
                                             const enablement::EnablementEntry& entry,
                                             const EnablementTarget& target,
                                             const std::string& home,
                                             const verify::BenchRequest& request,
                                             const util::ProgressCallback& progress) {
  const std::string path = home + "/" + verify::k_perplexity_text_guest_path;
  const std::string directory = path.substr(0, path.rfind('/'));
  LUME_UNLOCK_TRY_ASSIGN(const auto quoted, guest::shell_quote(directory));
  LUME_UNLOCK_TRY_ASSIGN(auto made, session.run("mkdir -p " + quoted));
  if (made.exit_status != 0) {
    return Error(ErrorCategory::guest,
                 "putting the perplexity text into the guest",
                 "mkdir -p " + util::quote_for_message(directory) +
                     " failed: " + last_lines(made.stderr_text, 2),
                 "check that the guest user can write under its home");
  }
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

#include "cli/commands.hpp"
#include "pipeline/golden.hpp"
#include "pipeline/status.hpp"
#include "util/atomic_file.hpp"
#include "util/text_check.hpp"

#include <memory>

namespace lume_unlock::cli {

namespace {

struct VerifyOptions {
  std::string vm;
  std::string llama_log;
  guest::ConnectionOptions connection;
};

/// The --llama-log file classified, injection expected (nothing without the flag).
std::optional<pipeline::VerifiedLog> classify_log_file(const std::string& path) {
  if (path.empty()) {
    return std::nullopt;
  }
  const std::string text =
      util::read_input_file(path, verify::k_max_llama_log_bytes, "the log").value_or_throw();
  verify::check_llama_log_lines(text).value_or_throw();
  verify::LlamaLogOptions log_options;
  log_options.expect_shim = true;
  return pipeline::VerifiedLog{path, verify::classify_llama_log(text, log_options)};
}

void print_verify_text(const std::string& vm,
                       const pipeline::VerifyFindings& found,
                       const std::optional<pipeline::VerifiedLog>& log,
                       Context& context) {
  const apply::InstalledShim& shim = found.shim;
  context.out << "verify '" << vm << "': " << (found.problems.empty() ? "ok" : "FAILED")
              << "\n  threadgroup memory " << found.verdict.stock_threadgroup_memory << " -> "
              << found.verdict.unlocked_threadgroup_memory << "\n  shim "
              << (shim.external ? "external " : "") << shim.shim.sha256 << ": "
              << apply::shim_scope(shim) << "\n  changed families:";
  for (const auto& code : found.verdict.changed_families) {
    context.out << " " << code;
  }
  context.out << "\n";
  for (const auto& entry : found.entries) {
    context.out << "  entry '" << entry.name << "': " << apply::describe(entry, shim.inject_env)
                << "\n";
  }
  if (!found.artifact_checks.empty()) {
    std::size_t matching = 0;
    for (const auto& item : found.artifact_checks) {
      matching += item.ok() ? 1 : 0;
    }
    context.out << "  artifact files: " << matching << " of " << found.artifact_checks.size()
                << " match the record\n";
  }
  if (log) {
    context.out << "  llama.cpp log: " << verify::verdict_name(log->report.verdict) << "\n";
    for (const auto& reason : log->report.reasons) {
      context.out << "    " << util::display_text(reason) << "\n";
    }
  }
  for (const auto& problem : found.problems) {
    context.out << "  problem: " << problem << "\n";
  }
}

nlohmann::json verify_json(const std::string& vm,
                           const pipeline::VerifyFindings& found,
                           const std::optional<pipeline::VerifiedLog>& log) {
  nlohmann::json doc = {
      {"vm", vm},
      {"ok", found.problems.empty()},
      {"profile",
       {{"apple_family_max", found.profile.apple_family_max},
        {"max_threadgroup_memory", found.profile.max_threadgroup_memory}}},
      {"shim",
       {{"sha256", found.shim.shim.sha256},
        {"external", found.shim.external},
        {"scope", apply::shim_scope(found.shim)}}},
      {"probe", {{"stock", found.probe.stock}, {"unlocked", found.probe.unlocked}}},
      {"changed_families", found.verdict.changed_families},
      {"entries", nlohmann::json::array()},
      {"artifacts", pipeline::to_json(pipeline::StatusReport{found.artifact_checks, 0})["items"]},
      {"problems", found.problems}};
  for (const auto& entry : found.entries) {
    doc["entries"].push_back(apply::to_json(entry));
  }
  if (log) {
    doc["llama_log"] = verify::to_json(log->report);
  }
  return doc;
}

int run_verify(const VerifyOptions& options, Context& context) {
  const std::optional<pipeline::VerifiedLog> log = classify_log_file(options.llama_log);
  auto session = context.open_guest(options.vm, options.connection);
  const pipeline::VerifyFindings found =
      pipeline::verify_vm(*session, context.global.state_dir, options.vm, log);
  context.debug_counts(session->command_count());
  // What `clone` asks of a golden VM: a passing verify of the record it has now.
  if (auto stamped = pipeline::write_verify_stamp(
          context.global.state_dir, options.vm, found.problems.empty());
      !stamped.ok()) {
    context.warn("the result was not stamped for 'clone': " + stamped.error().message());
  }
  if (context.json()) {
    context.print_json(verify_json(options.vm, found, log));
  } else {
    print_verify_text(options.vm, found, log, context);
  }
  if (!found.problems.empty()) {
    context.warn("verification of VM '" + options.vm + "' failed: " + found.problems.front());
    return exit_code(ErrorCategory::verification);
  }
  return 0;
}

} // namespace

void register_verify(CLI::App& app, Context& context) {
  auto options = std::make_shared<VerifyOptions>();
  auto* command = app.add_subcommand(
      "verify",
      "Probe the guest stock and with the shim, check the answers, that every running agent "
      "has the shim in its process, and re-hash the installed artifacts (exit 6 on failure)");
  command->add_option("name", options->vm, "The Lume VM")->required();
  command->add_option("--llama-log",
                      options->llama_log,
                      "Also classify the last run in this llama.cpp stderr log (must be 'fast', "
                      "or 'shim-enabled' where llama.cpp hides the capability block; 'broken' "
                      "names Metal's failure line)");
  add_connection_options(*command, options->connection);
  command->callback([options, &context] { context.exit_status = run_verify(*options, context); });
}

} // namespace lume_unlock::cli

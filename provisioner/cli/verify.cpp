#include "cli/verify.hpp"

#include "apply/enablement_apply.hpp"
#include "apply/probe_runner.hpp"
#include "apply/probe_verdict.hpp"
#include "apply/shim_record.hpp"
#include "cli/connection_flags.hpp"
#include "cli/vm_guest.hpp"
#include "guest/guest_facts.hpp"
#include "lume/client.hpp"
#include "pipeline/status.hpp"
#include "provenance/provenance.hpp"
#include "util/atomic_file.hpp"
#include "verify/llama_log.hpp"

#include <memory>

namespace lume_unlock::cli {

namespace {

struct VerifyOptions {
  std::string vm;
  std::string llama_log;
  guest::ConnectionOptions connection;
};

/// The profile the VM was provisioned with (its record), else the standard one.
enablement::Profile recorded_profile(const Context& context, const std::string& vm) {
  enablement::Profile profile = enablement::Profile::standard();
  auto record = provenance::read_provenance(context.global.state_dir, vm);
  if (record.ok() && record.value().shim && record.value().shim->profile) {
    const auto& p = *record.value().shim->profile;
    if (p.apple_family_max) {
      profile.apple_family_max = static_cast<std::uint64_t>(*p.apple_family_max);
    }
    if (p.max_threadgroup_memory) {
      profile.max_threadgroup_memory = static_cast<std::uint64_t>(*p.max_threadgroup_memory);
    }
  }
  return profile;
}

/// The --llama-log file classified, injection expected (nothing without the flag).
std::optional<verify::LlamaLogReport> classify_log_file(const std::string& path) {
  if (path.empty()) {
    return std::nullopt;
  }
  const std::string text =
      util::read_input_file(path, verify::k_max_llama_log_bytes, "the log").value_or_throw();
  verify::check_llama_log_lines(text).value_or_throw();
  verify::LlamaLogOptions log_options;
  log_options.expect_shim = true;
  return verify::classify_llama_log(text, log_options);
}

void print_verify_text(const std::string& vm,
                       const apply::InstalledShim& shim,
                       const apply::ProbeVerdict& verdict,
                       const std::vector<pipeline::StatusItem>& artifact_checks,
                       const std::optional<verify::LlamaLogReport>& log_report,
                       const std::vector<std::string>& problems,
                       Context& context) {
  context.out << "verify '" << vm << "': " << (problems.empty() ? "ok" : "FAILED")
              << "\n  threadgroup memory " << verdict.stock_threadgroup_memory << " -> "
              << verdict.unlocked_threadgroup_memory << "\n  shim "
              << (shim.external ? "external " : "") << shim.shim.sha256 << ": "
              << apply::shim_scope(shim) << "\n  changed families:";
  for (const auto& code : verdict.changed_families) {
    context.out << " " << code;
  }
  context.out << "\n";
  if (!artifact_checks.empty()) {
    std::size_t matching = 0;
    for (const auto& item : artifact_checks) {
      matching += item.ok() ? 1 : 0;
    }
    context.out << "  artifact files: " << matching << " of " << artifact_checks.size()
                << " match the record\n";
  }
  if (log_report) {
    context.out << "  llama.cpp log: " << verify::verdict_name(log_report->verdict) << "\n";
  }
  for (const auto& problem : problems) {
    context.out << "  problem: " << problem << "\n";
  }
}

void run_verify(const VerifyOptions& options, Context& context, int& exit_code) {
  const std::optional<verify::LlamaLogReport> log_report = classify_log_file(options.llama_log);
  const enablement::Profile profile = recorded_profile(context, options.vm);
  lume::ClientOptions lume_options;
  lume_options.base_url = context.global.lume_url;
  lume::LumeClient lume_client(lume_options);
  auto session = connect_vm_guest(context, options.vm, options.connection, lume_client);
  const guest::GuestFacts facts = guest::gather_guest_facts(*session).value_or_throw();
  const apply::GuestEnablement observed =
      apply::observe_enablement(*session, facts).value_or_throw();
  const apply::EnablementTarget target =
      apply::enablement_target(observed, facts, options.vm).value_or_throw();
  const apply::ProbeRun run = apply::run_probes(*session, target.shim, profile).value_or_throw();
  const apply::ProbeVerdict verdict =
      apply::judge_probe(run.stock, run.unlocked, profile, !target.shim.external);
  context.debug("SSH commands: " + std::to_string(session->command_count()) +
                ", Lume requests: " + std::to_string(lume_client.request_count()));

  // The installed artifacts (the host record's): each guest file re-hashed.
  std::vector<pipeline::StatusItem> artifact_checks;
  if (auto record = provenance::read_provenance(context.global.state_dir, options.vm);
      record.ok()) {
    artifact_checks = pipeline::check_artifacts(*session, record.value()).value_or_throw();
  }
  std::vector<std::string> problems = verdict.problems;
  for (const auto& item : artifact_checks) {
    if (!item.ok()) {
      problems.push_back(item.item + " has SHA-256 " + item.found + ", recorded " + item.expected);
    }
  }
  if (log_report && log_report->verdict != verify::LlamaLogVerdict::fast) {
    problems.push_back("the llama.cpp log '" + options.llama_log + "' is '" +
                       verify::verdict_name(log_report->verdict) + "', not 'fast'");
  }
  if (context.json()) {
    nlohmann::json doc = {
        {"vm", options.vm},
        {"ok", problems.empty()},
        {"profile",
         {{"apple_family_max", profile.apple_family_max},
          {"max_threadgroup_memory", profile.max_threadgroup_memory}}},
        {"shim",
         {{"sha256", target.shim.shim.sha256},
          {"external", target.shim.external},
          {"scope", apply::shim_scope(target.shim)}}},
        {"probe", {{"stock", run.stock}, {"unlocked", run.unlocked}}},
        {"changed_families", verdict.changed_families},
        {"artifacts", pipeline::to_json(pipeline::StatusReport{artifact_checks, 0})["items"]},
        {"problems", problems}};
    if (log_report) {
      doc["llama_log"] = verify::to_json(*log_report);
    }
    context.print_json(doc);
  } else {
    print_verify_text(
        options.vm, target.shim, verdict, artifact_checks, log_report, problems, context);
  }
  if (!problems.empty()) {
    context.warn("verification of VM '" + options.vm + "' failed: " + problems.front());
    exit_code = lume_unlock::exit_code(ErrorCategory::verification);
    return;
  }
  exit_code = 0;
}

} // namespace

void register_verify(CLI::App& app, Context& context, int& exit_code) {
  auto options = std::make_shared<VerifyOptions>();
  auto* command = app.add_subcommand(
      "verify",
      "Probe the guest stock and with the shim, check the answers and re-hash the installed "
      "artifacts (exit 6 on failure)");
  command->add_option("name", options->vm, "The Lume VM")->required();
  command->add_option("--llama-log",
                      options->llama_log,
                      "Also classify this llama.cpp stderr log (must be 'fast')");
  add_connection_options(*command, options->connection);
  command->callback([options, &context, &exit_code] { run_verify(*options, context, exit_code); });
}

} // namespace lume_unlock::cli

// Part of CreatePipeline (pipeline/create.hpp): the guest over SSH: log in, read its facts,
// install the shim, probe it stock and unlocked, apply the enablement list. Each step describes
// its own part of the plan beside the work it does.

#include "apply/enablement_apply.hpp"
#include "enablement/guest_layout.hpp"
#include "pipeline/create.hpp"
#include "pipeline/vm_record.hpp"
#include "provenance/provenance.hpp"

namespace lume_unlock::pipeline {

namespace {

/// "1006-1009" style ranges of the changed family codes.
std::string describe_changes(const apply::ProbeVerdict& verdict) {
  if (verdict.changed_families.empty()) {
    return "no family answer changed";
  }
  std::string text = "families " + verdict.changed_families.front();
  if (verdict.changed_families.size() > 1) {
    text += "-" + verdict.changed_families.back();
  }
  return text + " now true";
}

} // namespace

Step CreatePipeline::connect_step() {
  return {"connect", "SSH login (password first, then the per-VM key)", std::nullopt, "", [this] {
            return step_connect();
          }};
}

StepResult CreatePipeline::step_connect() {
  m_session = apply::connect_when_ready(m_services.connect, m_options.ssh_wait);
  return {false, "connected"};
}

Step CreatePipeline::facts_step() {
  return {"facts", "read the guest's OS, architecture, uid and home", std::nullopt, "", [this] {
            return step_facts();
          }};
}

StepResult CreatePipeline::step_facts() {
  m_facts = guest::gather_guest_facts(*m_session).value_or_throw();
  const std::string os =
      m_facts->product_version ? "macOS " + *m_facts->product_version : m_facts->kernel;
  return {false, os + " " + m_facts->machine + ", home " + m_facts->home};
}

Step CreatePipeline::install_shim_step() {
  const std::string external = m_external_shim
                                   ? "the external shim " + m_external_shim->path + " (sha256 " +
                                         m_external_shim->sha256.substr(0, 12) + "…, checked) with "
                                   : std::string();
  return {"install-shim",
          "install " + external + "the bundle " + m_services.bundle.manifest().version +
              " entry for the guest (" + m_options.bundle_source + ")",
          std::nullopt,
          "",
          [this] { return step_install_shim(); }};
}

StepResult CreatePipeline::step_install_shim() {
  apply::ShimInstallReport report =
      apply::install_shim(*m_session, m_services.bundle, *m_facts, m_external_shim)
          .value_or_throw();
  m_outcome.shim = report;
  const std::size_t files = 1 + report.installed.support.size() + (report.installed.probe ? 1 : 0);
  return {report.changed,
          std::string(report.changed ? "installed " : "in place: ") + std::to_string(files) +
              " files for " + report.platform};
}

Step CreatePipeline::probe_step() {
  return {"probe",
          "probe stock and with the shim (Apple ceiling " +
              std::to_string(profile().apple_family_max) + ", threadgroup memory " +
              std::to_string(profile().max_threadgroup_memory) + ")",
          std::nullopt,
          "",
          [this] { return step_probe(); }};
}

StepResult CreatePipeline::step_probe() {
  apply::ProbeRun run =
      apply::run_probes(*m_session, m_outcome.shim->installed, profile(), m_options.probe_extra_env)
          .value_or_throw();
  apply::ProbeVerdict verdict =
      apply::judge_probe(run.stock, run.unlocked, profile(), !m_outcome.shim->installed.external);
  m_outcome.probe = run;
  m_outcome.verdict = verdict;
  apply::require_probe_pass(verdict, m_options.vm).value_or_throw();
  return {false,
          describe_changes(verdict) + ", threadgroup memory " +
              std::to_string(verdict.stock_threadgroup_memory) + " -> " +
              std::to_string(verdict.unlocked_threadgroup_memory)};
}

Step CreatePipeline::enablement_step() {
  std::string allow_names;
  for (const auto& name : m_allow_entries) {
    allow_names += (allow_names.empty() ? "'" : ", '") + name + "'";
  }
  const std::string allow_part =
      m_allow_entries.empty() ? ""
      : m_options.exclusive   ? "; --exclusive: remove the entries added with allow: " + allow_names
                              : "; keep the entries added with allow: " + allow_names;
  return {"enablement",
          "apply " + std::to_string(m_recipe.enablement.entries.size()) + " enablement entr" +
              (m_recipe.enablement.entries.size() == 1 ? "y" : "ies") + " of the recipe" +
              allow_part,
          std::nullopt,
          "",
          [this] { return step_enablement(); }};
}

StepResult CreatePipeline::step_enablement() {
  const apply::GuestEnablement observed =
      apply::observe_enablement(*m_session, *m_facts).value_or_throw();
  apply::EnablementTarget target =
      apply::enablement_target(observed, *m_facts, m_options.vm).value_or_throw();
  target.settings.default_profile = profile();
  // Entries added with `allow` stay (as the guest has them) unless --exclusive.
  enablement::EnablementList desired = m_recipe.enablement;
  std::map<std::string, std::string> origins;
  const auto applied = apply::applied_list(observed);
  for (const std::string& name : m_allow_entries) {
    const enablement::EnablementEntry* entry = applied.ok() ? applied.value().find(name) : nullptr;
    if (m_options.exclusive || entry == nullptr) {
      m_outcome.removed_allow_entries.push_back(name);
      continue;
    }
    desired.entries.push_back(*entry);
    origins[name] = provenance::k_origin_allow;
    m_outcome.kept_allow_entries.push_back(name);
  }
  const apply::ApplyReport report =
      apply::apply_enablement(*m_session, desired, target, observed).value_or_throw();
  m_outcome.enablement_changes = report.changes;
  m_outcome.program_checks = report.checks;
  m_enablement_records =
      enablement_records(report.applied, target.layout, target.settings, origins).value_or_throw();
  const std::size_t n = desired.entries.size();
  const auto named = [](const std::string& verb, const std::vector<std::string>& names) {
    std::string text;
    for (const auto& name : names) {
      text +=
          (text.empty() ? "; " + verb + " the entries added with allow: '" : ", '") + name + "'";
    }
    return text;
  };
  const std::string kept = named("kept", m_outcome.kept_allow_entries) +
                           named("removed", m_outcome.removed_allow_entries);
  return {report.changed,
          (report.changed ? std::to_string(report.changes.size()) + " change(s)"
                          : std::to_string(n) + " entr" + (n == 1 ? "y" : "ies") + " in place") +
              kept};
}

} // namespace lume_unlock::pipeline

#include "cli/plan_runner.hpp"

namespace lume_unlock::cli {

void print_dry_run(const Context& context,
                   const pipeline::Plan& plan,
                   const std::string& vm,
                   const std::string& title,
                   const nlohmann::json& extra,
                   const std::string& aside) {
  if (context.json()) {
    nlohmann::json doc = plan.to_json();
    doc["vm"] = vm;
    doc["dry_run"] = true;
    doc.update(extra);
    context.print_json(doc);
  } else {
    context.out << title << " would run (dry run, nothing changed" << aside << "):\n"
                << plan.to_text();
  }
}

std::vector<pipeline::StepReport> apply_plan(const Context& context,
                                             pipeline::Plan& plan,
                                             const util::ProgressCallback& progress,
                                             const std::string& resume,
                                             const std::function<std::uint64_t()>& ssh_commands) {
  std::vector<pipeline::StepReport> reports;
  try {
    plan.apply(progress, resume, reports);
  } catch (const Error&) {
    context.debug_counts(ssh_commands());
    throw;
  }
  context.debug_counts(ssh_commands());
  return reports;
}

std::string resume_flag(const std::string& flag, const std::string& value) {
  return value.empty() ? std::string() : " " + flag + " " + value;
}

nlohmann::json with_reports(nlohmann::json doc, const std::vector<pipeline::StepReport>& reports) {
  doc.update(pipeline::reports_to_json(reports));
  return doc;
}

nlohmann::json program_checks_json(const std::vector<apply::ProgramCheck>& checks) {
  nlohmann::json list = nlohmann::json::array();
  for (const apply::ProgramCheck& check : checks) {
    list.push_back({{"entry", check.entry},
                    {"program", check.program},
                    {"verdict", macho::verdict_name(check.verdict.kind)},
                    {"archs", check.verdict.archs},
                    {"slice", check.verdict.slice},
                    {"why", check.verdict.why}});
  }
  return list;
}

void print_program_checks(std::ostream& out, const std::vector<apply::ProgramCheck>& checks) {
  for (const apply::ProgramCheck& check : checks) {
    out << "checked: " << apply::describe_check(check) << '\n';
  }
}

} // namespace lume_unlock::cli

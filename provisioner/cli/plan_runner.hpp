#pragma once

// The one way a command runs a pipeline::Plan (create, bake, remove, pull, allow): its dry run,
// its apply with the resume hint, the counts of what it cost, and the program checks it shows.

#include "apply/programs.hpp"
#include "cli/context.hpp"
#include "pipeline/plan.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lume_unlock::cli {

/// --dry-run: with --json {"plan", "steps", "no_op", "vm", "dry_run": true} and `extra`'s keys;
/// else "<title> would run (dry run, nothing changed<aside>):" and one line per step.
void print_dry_run(const Context& context,
                   const pipeline::Plan& plan,
                   const std::string& vm,
                   const std::string& title,
                   const nlohmann::json& extra = nlohmann::json::object(),
                   const std::string& aside = "");

/// Applies `plan` (progress on the renderer's callback); a failed step's error names `resume`,
/// the command that runs the same plan again. The counts go to --verbose either way, with
/// `ssh_commands()` asked after the run.
std::vector<pipeline::StepReport> apply_plan(const Context& context,
                                             pipeline::Plan& plan,
                                             const util::ProgressCallback& progress,
                                             const std::string& resume,
                                             const std::function<std::uint64_t()>& ssh_commands);

/// " FLAG VALUE" for the resume command, or nothing when `value` is empty.
std::string resume_flag(const std::string& flag, const std::string& value);

/// `doc` (an outcome's JSON) with the step reports: "steps" and "changed" (how many changed).
nlohmann::json with_reports(nlohmann::json doc, const std::vector<pipeline::StepReport>& reports);

/// {"entry", "program", "verdict", "archs", "slice", "why"} of one program check (--json of
/// `allow add` and `create`).
nlohmann::json program_checks_json(const std::vector<apply::ProgramCheck>& checks);

/// One line per check: "checked: program '/p': injectable (its arm64 slice …)".
void print_program_checks(std::ostream& out, const std::vector<apply::ProgramCheck>& checks);

} // namespace lume_unlock::cli

#pragma once

#include "util/error.hpp"
#include "util/progress.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

/// What applying one step did.
struct StepResult {
  bool changed = true;
  std::string summary; ///< one line for the user ("pulled sha256:ab12… in 41 s")
};

/// One idempotent step of a pipeline (create, pull, bake, remove, allow). A step is planned from
/// desired and observed state: when the observed state already matches, `in_place` is set and
/// apply() is not called. When the state cannot be observed at planning time (the guest is not
/// booted yet), `in_place` stays unknown and the step's apply() checks and reports
/// `changed = false` itself — so re-running a pipeline converges either way.
struct Step {
  std::string id;          ///< stable, for --json and resume hints ("image", "install-shim")
  std::string description; ///< what it does, with the concrete values
  std::optional<bool> in_place;
  std::string observed; ///< what was observed (why it is or is not in place)
  std::function<StepResult()> apply;

  /// Planned from what was observed: in place, to do, or (nullopt) only known once it runs.
  static Step observed_as(std::string id,
                          std::string description,
                          std::optional<bool> in_place,
                          std::string observed,
                          std::function<StepResult()> apply) {
    return {std::move(id), std::move(description), in_place, std::move(observed), std::move(apply)};
  }
  /// Nothing to observe before it runs: apply() checks, and may report `changed = false`.
  static Step
  unobserved(std::string id, std::string description, std::function<StepResult()> apply) {
    return {std::move(id), std::move(description), std::nullopt, {}, std::move(apply)};
  }
  /// Always to do (a push, a signature, a record).
  static Step to_do(std::string id, std::string description, std::function<StepResult()> apply) {
    return {std::move(id), std::move(description), false, {}, std::move(apply)};
  }
};

/// A step's result from a lower layer's report of the same shape (`changed`, `summary`), such as
/// lume::VmTransition.
template <typename Report>
StepResult step_result(const Report& report) {
  return {report.changed, report.summary};
}

enum class StepOutcome { unchanged, changed, failed, not_run };

struct StepReport {
  std::string id;
  std::string description;
  StepOutcome outcome = StepOutcome::not_run;
  std::string summary;
  double seconds = 0;
};

/// An ordered list of steps: printed by --dry-run, executed by apply().
class Plan {
public:
  explicit Plan(std::string name) : m_name(std::move(name)) {}

  void add(Step step) { m_steps.push_back(std::move(step)); }
  const std::vector<Step>& steps() const { return m_steps; }
  const std::string& name() const { return m_name; }

  /// {"plan": name, "steps": [{"id", "description", "in_place": bool|null, "observed"}],
  ///  "no_op": bool}.
  nlohmann::json to_json() const;
  /// Every step is observed in place: apply() would change nothing.
  bool no_op() const;
  /// One line per step: "  [in place] image  pull …" / "  [to do] …" / "  [check] …".
  std::string to_text() const;

  /// Runs the steps in order, reporting each through `progress`. A step that throws stops the
  /// run: the Error is rethrown with the step named and a hint to re-run `resume_command`
  /// (every step is idempotent, so re-running resumes). `reports` receives every step's outcome
  /// (also the ones not run) either way.
  void apply(const util::ProgressCallback& progress,
             const std::string& resume_command,
             std::vector<StepReport>& reports);

private:
  std::string m_name;
  std::vector<Step> m_steps;
};

/// {"steps": [{"id","description","outcome","summary","seconds"}], "changed": n}
nlohmann::json reports_to_json(const std::vector<StepReport>& reports);
/// "<title>: N step(s) changed" (or "no changes"), then one line per step: outcome, id, summary.
std::string reports_to_text(const std::string& title, const std::vector<StepReport>& reports);

} // namespace lume_unlock::pipeline

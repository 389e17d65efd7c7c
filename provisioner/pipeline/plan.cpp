#include "plan.hpp"

#include <chrono>
#include <iomanip>
#include <sstream>

namespace lume_unlock::pipeline {

namespace {

int changed_count(const std::vector<StepReport>& reports) {
  int changed = 0;
  for (const auto& r : reports) {
    changed += r.outcome == StepOutcome::changed ? 1 : 0;
  }
  return changed;
}

const char* outcome_name(StepOutcome outcome) {
  static const char* const names[] = {"unchanged", "changed", "failed", "not-run"};
  return names[static_cast<int>(outcome)];
}

} // namespace

nlohmann::json Plan::to_json() const {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& step : m_steps) {
    steps.push_back(
        {{"id", step.id},
         {"description", step.description},
         {"in_place", step.in_place ? nlohmann::json(*step.in_place) : nlohmann::json()},
         {"observed", step.observed}});
  }
  return {{"plan", m_name}, {"steps", steps}, {"no_op", no_op()}};
}

bool Plan::no_op() const {
  for (const auto& step : m_steps) {
    if (!step.in_place.value_or(false)) {
      return false;
    }
  }
  return true;
}

std::string Plan::to_text() const {
  std::string text;
  for (const auto& step : m_steps) {
    const char* mark =
        !step.in_place ? "[check]   " : (*step.in_place ? "[in place]" : "[to do]   ");
    text += "  " + std::string(mark) + " " + step.id + ": " + step.description +
            (step.observed.empty() ? "" : " (" + step.observed + ")") + "\n";
  }
  return text;
}

void Plan::apply(const util::ProgressCallback& progress,
                 const std::string& resume_command,
                 std::vector<StepReport>& reports) {
  reports.clear();
  for (const auto& step : m_steps) {
    reports.push_back({step.id, step.description, StepOutcome::not_run, {}, 0});
  }
  for (std::size_t i = 0; i < m_steps.size(); ++i) {
    Step& step = m_steps[i];
    StepReport& report = reports[i];
    util::ProgressEvent event;
    event.step = step.id;
    event.done = i;
    event.total = m_steps.size();
    const auto tell = [&](const std::string& detail, bool finished) {
      event.detail = detail;
      event.finished = finished;
      if (progress) {
        progress(event);
      }
    };
    if (step.in_place.value_or(false)) {
      report.outcome = StepOutcome::unchanged;
      report.summary = step.observed.empty() ? "already in place" : step.observed;
      tell(report.summary, true);
      continue;
    }
    tell(step.description, false);
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    try {
      StepResult result = step.apply ? step.apply() : StepResult{false, "nothing to do"};
      report.outcome = result.changed ? StepOutcome::changed : StepOutcome::unchanged;
      report.summary = result.summary;
    } catch (const Error& error) {
      report.outcome = StepOutcome::failed;
      report.summary = error.message();
      report.seconds = elapsed();
      const std::string resume = "re-run '" + resume_command + "' to resume from this step";
      throw error.with_context(m_name + " step '" + step.id + "'")
          .with_hint(error.hint().empty() ? resume : error.hint() + "; then " + resume);
    }
    report.seconds = elapsed();
    tell(report.summary, true);
  }
}

nlohmann::json reports_to_json(const std::vector<StepReport>& reports) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& r : reports) {
    steps.push_back({{"id", r.id},
                     {"description", r.description},
                     {"outcome", outcome_name(r.outcome)},
                     {"summary", r.summary},
                     {"seconds", r.seconds}});
  }
  return {{"steps", steps}, {"changed", changed_count(reports)}};
}

std::string reports_to_text(const std::string& title, const std::vector<StepReport>& reports) {
  const int changed = changed_count(reports);
  std::ostringstream out;
  out << title << ": "
      << (changed == 0 ? std::string("no changes") : std::to_string(changed) + " step(s) changed")
      << "\n";
  for (const auto& r : reports) {
    out << "  " << std::left << std::setw(10) << outcome_name(r.outcome) << std::right << r.id
        << ": " << r.summary << "\n";
  }
  return out.str();
}

} // namespace lume_unlock::pipeline

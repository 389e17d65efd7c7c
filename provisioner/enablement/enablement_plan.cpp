#include "enablement/enablement_plan.hpp"

#include "enablement/enablement_list.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>

namespace lume_unlock::enablement {

namespace {

FileWrite make_write(const std::string& path,
                     const std::string& staging_dir,
                     std::string content,
                     std::optional<std::string> previous) {
  FileWrite write;
  write.path = path;
  write.staged_path = staging_dir + "/" + util::base_name(path);
  write.sha256 = util::sha256_hex(content);
  write.content = std::move(content);
  write.previous = std::move(previous);
  return write;
}

using AgentFilter = std::function<bool(const AgentAction&)>;

bool is_one_of(AgentChange change, std::initializer_list<AgentChange> changes) {
  return std::find(changes.begin(), changes.end(), change) != changes.end();
}

/// Bootstraps (may_fail as given) or boots out (may_fail: the loaded state may be unknown or stale,
/// after a user's bootout or a crashed job) the agents `filter` picks.
Step agents_step(const EnablementPlan& plan,
                 StepKind kind,
                 const AgentFilter& filter,
                 bool may_fail) {
  Step step{kind, {}, {}};
  for (const AgentAction& agent : plan.agents) {
    if (filter(agent)) {
      step.commands.push_back({kind == StepKind::bootstrap_agents
                                   ? launchctl_bootstrap(plan.uid, agent.plist_path)
                                   : launchctl_bootout(plan.uid, agent.label),
                               may_fail});
    }
  }
  return step;
}

/// Agents whose old version must go before the new one is loaded (forward), and that a
/// rollback loads again from their restored plist.
bool was_loaded_before(const AgentAction& agent) {
  return is_one_of(agent.change,
                   {AgentChange::added, AgentChange::changed, AgentChange::removed}) &&
         agent.was_loaded;
}

/// Agents the bootstrap step loads.
bool is_loaded_by_apply(const AgentAction& agent) {
  return is_one_of(agent.change,
                   {AgentChange::added, AgentChange::changed, AgentChange::not_loaded});
}

Step clean_staging_step(const EnablementPlan& plan) {
  // The whole root, not only this run's directory: every writer holds the VM's lock
  // (pipeline/vm_lock), so anything else there was left by an interrupted run, and a re-run
  // converges by removing it.
  return Step{StepKind::clean_staging, {{{"rm", "-rf", plan.staging_root}, false}}, {}};
}

Step restore_step(const EnablementPlan& plan) {
  Step step{StepKind::restore_files, {}, {}};
  for (const FileWrite& write : plan.writes) {
    if (write.previous) {
      FileWrite restore = write;
      restore.staged_path.clear();
      restore.content = *write.previous;
      restore.sha256 = util::sha256_hex(restore.content);
      restore.previous.reset();
      step.files.push_back(std::move(restore));
    } else {
      step.commands.push_back({{"rm", "-f", write.path}, false});
    }
  }
  for (const FileRemoval& removal : plan.removals) {
    FileWrite restore;
    restore.path = removal.path;
    restore.content = removal.previous;
    restore.sha256 = util::sha256_hex(restore.content);
    step.files.push_back(std::move(restore));
  }
  return step;
}

void push_if_nonempty(std::vector<Step>& steps, Step step) {
  if (!step.commands.empty() || !step.files.empty()) {
    steps.push_back(std::move(step));
  }
}

/// Loaded, as far as the guest told: without the labels (launchctl print failed), assume so.
bool loaded_in(const ObservedState& observed, const std::string& label) {
  return !observed.loaded_labels || observed.loaded_labels->count(label) != 0;
}

using AgentActions = std::map<std::string, AgentAction>;

/// Desired agents by name, compared with the plists present: a new or changed plist is written
/// (its final path noted in `staged_plists`), an unchanged one that is not loaded gets loaded.
Status plan_desired_agents(const EnablementList& desired,
                           const guest::GuestLayout& layout,
                           const AgentSettings& settings,
                           const ObservedState& observed,
                           EnablementPlan& plan,
                           AgentActions& agents,
                           std::set<std::string>& staged_plists) {
  LUME_UNLOCK_TRY_ASSIGN(auto rendered, render_agents(desired, layout, settings));
  for (RenderedAgent& agent : rendered) {
    const auto present = observed.agent_plists.find(guest::agent_plist_file_name(agent.name));
    AgentAction action;
    action.name = agent.name;
    action.label = agent.label;
    action.plist_path = agent.plist_path;
    action.new_sha256 = agent.sha256;
    action.was_loaded = loaded_in(observed, action.label);
    if (present != observed.agent_plists.end() && present->second == agent.content) {
      if (!action.was_loaded) {
        action.change = AgentChange::not_loaded;
        action.old_sha256 = action.new_sha256;
        agents[agent.name] = action;
      }
      continue;
    }
    std::optional<std::string> previous;
    if (present == observed.agent_plists.end()) {
      action.change = AgentChange::added;
      // Loaded without a plist (an interrupted apply, a bootout that failed): known only from
      // the labels; such a job must go before the new one can be bootstrapped.
      action.was_loaded =
          observed.loaded_labels && observed.loaded_labels->count(action.label) != 0;
    } else {
      action.change = AgentChange::changed;
      action.old_sha256 = util::sha256_hex(present->second);
      previous = present->second;
    }
    agents[agent.name] = action;
    staged_plists.insert(agent.plist_path);
    plan.writes.push_back(make_write(
        agent.plist_path, plan.staging_dir, std::move(agent.content), std::move(previous)));
  }
  return ok_status();
}

/// The rest of ours are removed: plists no desired agent owns, and loaded agents of ours whose
/// plist is gone.
void plan_removed_agents(const EnablementList& desired,
                         const guest::GuestLayout& layout,
                         const ObservedState& observed,
                         EnablementPlan& plan,
                         AgentActions& agents) {
  for (const auto& [file_name, content] : observed.agent_plists) {
    const std::string name = guest::entry_name_from_plist_file_name(file_name);
    const EnablementEntry* entry = desired.find(name);
    if (name.empty() || (entry != nullptr && entry->agent)) {
      continue;
    }
    const std::string label = file_name.substr(0, file_name.size() - std::string(".plist").size());
    const std::string path = layout.launch_agents_dir() + "/" + file_name;
    agents[name] = AgentAction{AgentChange::removed,
                               name,
                               label,
                               path,
                               util::sha256_hex(content),
                               "",
                               loaded_in(observed, label)};
    plan.removals.push_back(FileRemoval{path, content});
  }
  // Loaded agents of ours whose plist is gone and that no desired agent owns: boot them out.
  if (observed.loaded_labels) {
    const std::string prefix = guest::agent_label("");
    for (const std::string& label : *observed.loaded_labels) {
      const std::string name = util::starts_with(label, prefix) ? label.substr(prefix.size()) : "";
      const EnablementEntry* entry = desired.find(name);
      if (name.empty() || agents.count(name) != 0 || (entry != nullptr && entry->agent) ||
          observed.agent_plists.count(guest::agent_plist_file_name(name)) != 0) {
        continue;
      }
      agents[name] = AgentAction{
          AgentChange::removed, name, label, layout.agent_plist_path(name), "", "", true};
    }
  }
}

/// The steps that carry a plan out, in order: directories, staging, lint, bootout, install,
/// bootstrap, clean up.
void plan_steps(EnablementPlan& plan,
                const guest::GuestLayout& layout,
                const std::set<std::string>& staged_plists) {
  plan.steps.push_back(Step{StepKind::make_directories,
                            {{{"mkdir",
                               "-p",
                               layout.support_dir(),
                               plan.staging_dir,
                               layout.launch_agents_dir(),
                               layout.logs_dir()},
                              false}},
                            {}});
  push_if_nonempty(plan.steps, Step{StepKind::stage_files, {}, plan.writes});
  std::vector<std::string> lint_paths;
  for (const FileWrite& write : plan.writes) {
    if (staged_plists.count(write.path) != 0) {
      lint_paths.push_back(write.staged_path);
    }
  }
  if (!lint_paths.empty()) {
    plan.steps.push_back(Step{StepKind::lint_plists, {{plutil_lint(lint_paths), false}}, {}});
  }
  push_if_nonempty(plan.steps,
                   agents_step(plan, StepKind::bootout_agents, was_loaded_before, true));
  Step install{StepKind::install_files, {}, {}};
  for (const FileWrite& write : plan.writes) {
    install.commands.push_back({{"mv", "-f", write.staged_path, write.path}, false});
  }
  for (const FileRemoval& removal : plan.removals) {
    install.commands.push_back({{"rm", "-f", removal.path}, false});
  }
  push_if_nonempty(plan.steps, std::move(install));
  push_if_nonempty(plan.steps,
                   agents_step(plan, StepKind::bootstrap_agents, is_loaded_by_apply, false));
  plan.steps.push_back(clean_staging_step(plan));
}

} // namespace

bool operator==(const FileWrite& a, const FileWrite& b) {
  return std::tie(a.path, a.staged_path, a.content, a.sha256, a.mode, a.previous) ==
         std::tie(b.path, b.staged_path, b.content, b.sha256, b.mode, b.previous);
}
bool operator==(const FileRemoval& a, const FileRemoval& b) {
  return a.path == b.path && a.previous == b.previous;
}
bool operator==(const AgentAction& a, const AgentAction& b) {
  return std::tie(
             a.change, a.name, a.label, a.plist_path, a.old_sha256, a.new_sha256, a.was_loaded) ==
         std::tie(
             b.change, b.name, b.label, b.plist_path, b.old_sha256, b.new_sha256, b.was_loaded);
}
bool operator==(const Command& a, const Command& b) {
  return a.argv == b.argv && a.may_fail == b.may_fail;
}

const char* step_kind_name(StepKind kind) {
  static const char* const names[] = {"make-directories",
                                      "stage-files",
                                      "lint-plists",
                                      "bootout-agents",
                                      "install-files",
                                      "bootstrap-agents",
                                      "clean-staging",
                                      "restore-files"};
  return names[static_cast<int>(kind)];
}

Result<EnablementPlan> plan_enablement(const EnablementList& desired,
                                       const guest::GuestLayout& layout,
                                       const AgentSettings& settings,
                                       std::uint32_t uid,
                                       const ObservedState& observed) {
  LUME_UNLOCK_TRY(validate(desired));
  EnablementPlan plan;
  plan.uid = uid;
  plan.staging_dir = layout.staging_dir();
  plan.staging_root = layout.staging_root();

  // Agents: desired ones by name, compared with the plists present; the rest of ours are removed.
  AgentActions agents;
  std::set<std::string> staged_plists; // final paths of the plists this plan writes
  LUME_UNLOCK_TRY(
      plan_desired_agents(desired, layout, settings, observed, plan, agents, staged_plists));
  plan_removed_agents(desired, layout, observed, plan, agents);
  for (auto& [name, action] : agents) {
    plan.agents.push_back(std::move(action));
  }
  std::sort(plan.writes.begin(), plan.writes.end(), [](const FileWrite& a, const FileWrite& b) {
    return a.path < b.path;
  });
  std::sort(plan.removals.begin(),
            plan.removals.end(),
            [](const FileRemoval& a, const FileRemoval& b) { return a.path < b.path; });

  // The guard file, then enablement.json: the record of what was applied comes last.
  const std::string guard = render_guard_file(desired);
  if (observed.guard_file != guard) {
    plan.writes.push_back(
        make_write(layout.guard_file_path(), plan.staging_dir, guard, observed.guard_file));
  }
  const std::string record = render_enablement_json(desired);
  if (observed.enablement_json != record) {
    plan.writes.push_back(make_write(
        layout.enablement_json_path(), plan.staging_dir, record, observed.enablement_json));
  }

  if (plan.writes.empty() && plan.removals.empty() && plan.agents.empty()) {
    return plan;
  }

  plan_steps(plan, layout, staged_plists);
  return plan;
}

std::vector<Step> EnablementPlan::rollback_after(StepKind failed) const {
  std::vector<Step> steps;
  switch (failed) {
  case StepKind::make_directories:
  case StepKind::stage_files:
  case StepKind::lint_plists:
    break;
  case StepKind::bootstrap_agents:
    push_if_nonempty(steps, agents_step(*this, StepKind::bootout_agents, is_loaded_by_apply, true));
    [[fallthrough]];
  case StepKind::install_files:
    push_if_nonempty(steps, restore_step(*this));
    [[fallthrough]];
  case StepKind::bootout_agents:
    push_if_nonempty(steps,
                     agents_step(
                         *this,
                         StepKind::bootstrap_agents,
                         [](const AgentAction& agent) {
                           // A loaded agent without a plist cannot be loaded again.
                           return was_loaded_before(agent) && !agent.old_sha256.empty();
                         },
                         true));
    break;
  case StepKind::clean_staging:
  case StepKind::restore_files:
    return steps;
  }
  steps.push_back(clean_staging_step(*this));
  return steps;
}

std::vector<std::string> EnablementPlan::describe() const {
  std::vector<std::string> lines;
  for (const AgentAction& agent : agents) {
    static const char* const changes[] = {"add", "change", "remove", "load"};
    lines.push_back(changes[static_cast<int>(agent.change)] + std::string(" agent ") +
                    util::quote_for_message(agent.name) + " (" + agent.label + ")");
  }
  for (const FileWrite& write : writes) {
    lines.push_back((write.previous ? "rewrite " : "write ") + write.path);
  }
  for (const FileRemoval& removal : removals) {
    lines.push_back("remove " + removal.path);
  }
  return lines;
}

} // namespace lume_unlock::enablement

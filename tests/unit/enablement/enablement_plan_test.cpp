#include "enablement/enablement_list.hpp"
#include "enablement/enablement_plan.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <stdexcept>

namespace lume_unlock::enablement {
namespace {

const std::string k_sha(64, 'c');
constexpr std::uint32_t k_uid = 501;

guest::GuestLayout test_layout() {
  return guest::GuestLayout::make("/Users/Test User", k_sha).value_or_throw();
}

EnablementEntry agent_entry(const std::string& name) {
  EnablementEntry e;
  e.name = name;
  e.program = "/opt/" + name + "/bin/" + name;
  e.args = {"--port", "8080"};
  return e;
}

EnablementEntry exec_entry(const std::string& name) {
  EnablementEntry e = agent_entry(name);
  e.agent = false;
  e.keep_alive = false;
  return e;
}

/// An in-memory guest that executes plan steps the way the SSH executor will: files by path,
/// launchd's loaded jobs by label (with the plist bytes they were loaded from).
struct FakeGuest {
  std::map<std::string, std::string> files;
  std::map<std::string, std::string> loaded;
  std::size_t round_trips = 0;

  ObservedState observe(const guest::GuestLayout& layout, bool with_loaded_labels = false) const {
    ObservedState state;
    if (with_loaded_labels) {
      state.loaded_labels.emplace();
      for (const auto& [label, plist] : loaded) {
        state.loaded_labels->insert(label);
      }
    }
    if (auto it = files.find(layout.enablement_json_path()); it != files.end()) {
      state.enablement_json = it->second;
    }
    if (auto it = files.find(layout.guard_file_path()); it != files.end()) {
      state.guard_file = it->second;
    }
    const std::string prefix = layout.launch_agents_dir() + "/";
    for (const auto& [path, content] : files) {
      const std::string file_name = path.substr(prefix.size());
      if (path.rfind(prefix, 0) == 0 && file_name.rfind("dev.lume-unlock.", 0) == 0) {
        state.agent_plists[file_name] = content;
      }
    }
    return state;
  }

  bool run_command(const Argv& argv) {
    if (argv[0] == "mkdir") {
      return true;
    }
    if (argv[0] == "mv") {
      auto it = files.find(argv[2]);
      if (it == files.end()) {
        return false;
      }
      files[argv[3]] = it->second;
      files.erase(argv[2]);
      return true;
    }
    if (argv[0] == "rm" && argv[1] == "-f") {
      files.erase(argv[2]);
      return true;
    }
    if (argv[0] == "rm" && argv[1] == "-rf") {
      for (auto it = files.begin(); it != files.end();) {
        it = it->first.rfind(argv[2] + "/", 0) == 0 ? files.erase(it) : std::next(it);
      }
      return true;
    }
    if (argv[0] == "plutil") {
      for (std::size_t i = 2; i < argv.size(); ++i) {
        if (files.count(argv[i]) == 0) {
          return false;
        }
      }
      return true;
    }
    if (argv[0] == "launchctl" && argv[1] == "bootout") {
      const std::string label = argv[2].substr(std::string("gui/501/").size());
      return loaded.erase(label) == 1;
    }
    if (argv[0] == "launchctl" && argv[1] == "bootstrap") {
      EXPECT_EQ(argv[2], "gui/501");
      const std::string& path = argv[3];
      const std::string file_name = path.substr(path.find_last_of('/') + 1);
      const std::string label = file_name.substr(0, file_name.size() - 6);
      auto it = files.find(path);
      if (it == files.end() || loaded.count(label) != 0) {
        return false; // launchd: "Bootstrap failed: 5: Input/output error"
      }
      loaded[label] = it->second;
      return true;
    }
    ADD_FAILURE() << "unexpected command " << argv[0];
    return false;
  }

  /// Runs one step in one "round trip"; false when a command that may not fail failed.
  bool run(const Step& step) {
    ++round_trips;
    for (const FileWrite& file : step.files) {
      EXPECT_EQ(util::sha256_hex(file.content), file.sha256);
      files[step.kind == StepKind::stage_files ? file.staged_path : file.path] = file.content;
    }
    for (const Command& command : step.commands) {
      if (!run_command(command.argv) && !command.may_fail) {
        return false;
      }
    }
    return true;
  }

  /// Applies the plan; when `fail_at` is given, that step fails (before it runs) and the
  /// rollback runs instead.
  void apply(const EnablementPlan& plan, std::optional<StepKind> fail_at = std::nullopt) {
    for (const Step& step : plan.steps) {
      if (fail_at == step.kind) {
        for (const Step& undo : plan.rollback_after(step.kind)) {
          run(undo);
        }
        return;
      }
      ASSERT_TRUE(run(step)) << step_kind_name(step.kind);
    }
  }
};

EnablementPlan
plan_for(const EnablementList& list, const FakeGuest& guest, bool with_loaded_labels = false) {
  return plan_enablement(list,
                         test_layout(),
                         AgentSettings{},
                         k_uid,
                         guest.observe(test_layout(), with_loaded_labels))
      .value_or_throw();
}

std::vector<StepKind> kinds(const EnablementPlan& plan) {
  std::vector<StepKind> result;
  for (const Step& step : plan.steps) {
    result.push_back(step.kind);
  }
  return result;
}

const Step& step_of(const EnablementPlan& plan, StepKind kind) {
  for (const Step& step : plan.steps) {
    if (step.kind == kind) {
      return step;
    }
  }
  throw std::runtime_error(std::string("no step ") + step_kind_name(kind));
}

TEST(EnablementPlan, FreshGuestWritesBootstrapsAndConverges) {
  EnablementList list;
  list.entries = {agent_entry("llama-server"), exec_entry("llama-bench")};
  FakeGuest guest;
  const guest::GuestLayout layout = test_layout();
  const EnablementPlan plan = plan_for(list, guest);

  EXPECT_EQ(kinds(plan),
            (std::vector<StepKind>{StepKind::make_directories,
                                   StepKind::stage_files,
                                   StepKind::lint_plists,
                                   StepKind::install_files,
                                   StepKind::bootstrap_agents,
                                   StepKind::clean_staging}));
  ASSERT_EQ(plan.agents.size(), 1u);
  EXPECT_EQ(plan.agents[0].change, AgentChange::added);
  EXPECT_EQ(plan.agents[0].label, "dev.lume-unlock.llama-server");
  EXPECT_EQ(plan.agents[0].old_sha256, "");
  ASSERT_EQ(plan.writes.size(), 3u);
  EXPECT_EQ(plan.writes[0].path, layout.agent_plist_path("llama-server"));
  EXPECT_EQ(plan.writes[0].sha256, plan.agents[0].new_sha256);
  EXPECT_EQ(plan.writes[0].staged_path,
            layout.staging_dir() + "/dev.lume-unlock.llama-server.plist");
  EXPECT_EQ(plan.writes[1].path, layout.guard_file_path());
  EXPECT_EQ(plan.writes[1].content, render_guard_file(list));
  EXPECT_EQ(plan.writes[2].path, layout.enablement_json_path());
  EXPECT_EQ(plan.writes[2].content, render_enablement_json(list));
  for (const FileWrite& write : plan.writes) {
    EXPECT_FALSE(write.previous) << write.path;
    EXPECT_EQ(write.mode, 0644u);
  }
  EXPECT_EQ(step_of(plan, StepKind::make_directories).commands[0].argv,
            (Argv{"mkdir",
                  "-p",
                  layout.support_dir(),
                  layout.staging_dir(),
                  layout.launch_agents_dir(),
                  layout.logs_dir()}));
  EXPECT_EQ(
      step_of(plan, StepKind::lint_plists).commands[0].argv,
      (Argv{"plutil", "-lint", layout.staging_dir() + "/dev.lume-unlock.llama-server.plist"}));
  EXPECT_EQ(step_of(plan, StepKind::bootstrap_agents).commands,
            (std::vector<Command>{
                {{"launchctl", "bootstrap", "gui/501", layout.agent_plist_path("llama-server")},
                 false}}));
  EXPECT_EQ(plan.describe(),
            (std::vector<std::string>{"add agent 'llama-server' (dev.lume-unlock.llama-server)",
                                      "write " + layout.agent_plist_path("llama-server"),
                                      "write " + layout.guard_file_path(),
                                      "write " + layout.enablement_json_path()}));

  guest.apply(plan);
  EXPECT_EQ(guest.loaded.size(), 1u);
  EXPECT_EQ(guest.loaded["dev.lume-unlock.llama-server"], plan.writes[0].content);
  EXPECT_EQ(guest.files.size(), 3u) << "staging is cleaned up";
  EXPECT_TRUE(plan_for(list, guest).empty()) << "a second apply changes nothing";
}

TEST(EnablementPlan, NothingDiffersGivesAnEmptyPlan) {
  EnablementList list;
  list.entries = {agent_entry("a"), agent_entry("b")};
  FakeGuest guest;
  guest.apply(plan_for(list, guest));
  const EnablementPlan again = plan_for(list, guest);
  EXPECT_TRUE(again.empty());
  EXPECT_TRUE(again.writes.empty());
  EXPECT_TRUE(again.removals.empty());
  EXPECT_TRUE(again.agents.empty());
  EXPECT_TRUE(again.describe().empty());
}

struct ChangeCase {
  const char* label;
  std::function<void(EnablementEntry&)> edit;
};

TEST(EnablementPlan, ChangedEntriesAreRewrittenAndRebootstrapped) {
  const ChangeCase cases[] = {
      {"args", [](EnablementEntry& e) { e.args.push_back("--verbose"); }},
      {"profile",
       [](EnablementEntry& e) {
         e.profile = Profile{1007, 32768};
       }},
      {"env", [](EnablementEntry& e) { e.env["GGML_METAL_NO_RESIDENCY"] = "1"; }},
      {"keep_alive", [](EnablementEntry& e) { e.keep_alive = false; }},
  };
  for (const ChangeCase& c : cases) {
    EnablementList list;
    list.entries = {agent_entry("a"), agent_entry("b")};
    FakeGuest guest;
    guest.apply(plan_for(list, guest));
    const std::string old_plist = guest.loaded["dev.lume-unlock.b"];

    c.edit(list.entries[1]);
    const EnablementPlan plan = plan_for(list, guest);
    ASSERT_EQ(plan.agents.size(), 1u) << c.label;
    const AgentAction& agent = plan.agents[0];
    EXPECT_EQ(agent.change, AgentChange::changed) << c.label;
    EXPECT_EQ(agent.name, "b") << c.label;
    EXPECT_EQ(agent.old_sha256, util::sha256_hex(old_plist)) << c.label;
    EXPECT_NE(agent.new_sha256, agent.old_sha256) << c.label;
    ASSERT_EQ(plan.writes.size(), 2u)
        << c.label << ": the plist and enablement.json; the guard file is unchanged";
    EXPECT_EQ(plan.writes[0].previous, old_plist) << c.label;
    EXPECT_EQ(plan.writes[1].path, test_layout().enablement_json_path()) << c.label;
    EXPECT_EQ(kinds(plan),
              (std::vector<StepKind>{StepKind::make_directories,
                                     StepKind::stage_files,
                                     StepKind::lint_plists,
                                     StepKind::bootout_agents,
                                     StepKind::install_files,
                                     StepKind::bootstrap_agents,
                                     StepKind::clean_staging}))
        << c.label;
    EXPECT_EQ(step_of(plan, StepKind::bootout_agents).commands,
              (std::vector<Command>{{{"launchctl", "bootout", "gui/501/dev.lume-unlock.b"}, true}}))
        << c.label;

    guest.apply(plan);
    EXPECT_EQ(guest.loaded["dev.lume-unlock.b"], plan.writes[0].content) << c.label;
    EXPECT_TRUE(plan_for(list, guest).empty()) << c.label;
  }
}

TEST(EnablementPlan, RemovedEntriesAreBootedOutAndDeleted) {
  EnablementList list;
  list.entries = {agent_entry("a"), agent_entry("b")};
  FakeGuest guest;
  guest.apply(plan_for(list, guest));
  const std::string old_plist = guest.files[test_layout().agent_plist_path("a")];

  list.entries.erase(list.entries.begin());
  const EnablementPlan plan = plan_for(list, guest);
  ASSERT_EQ(plan.agents.size(), 1u);
  EXPECT_EQ(plan.agents[0].change, AgentChange::removed);
  EXPECT_EQ(plan.agents[0].new_sha256, "");
  ASSERT_EQ(plan.removals.size(), 1u);
  EXPECT_EQ(plan.removals[0], (FileRemoval{test_layout().agent_plist_path("a"), old_plist}));
  ASSERT_EQ(plan.writes.size(), 2u) << "guard file and enablement.json";
  EXPECT_EQ(kinds(plan),
            (std::vector<StepKind>{StepKind::make_directories,
                                   StepKind::stage_files,
                                   StepKind::bootout_agents,
                                   StepKind::install_files,
                                   StepKind::clean_staging}));

  guest.apply(plan);
  EXPECT_EQ(guest.loaded.count("dev.lume-unlock.a"), 0u);
  EXPECT_EQ(guest.files.count(test_layout().agent_plist_path("a")), 0u);
  EXPECT_EQ(guest.files[test_layout().guard_file_path()].find("/opt/a/"), std::string::npos);
  EXPECT_TRUE(plan_for(list, guest).empty());
}

TEST(EnablementPlan, AgentBecomingExecOnlyLosesItsAgentButStaysInTheGuard) {
  EnablementList list;
  list.entries = {agent_entry("a")};
  FakeGuest guest;
  guest.apply(plan_for(list, guest));
  list.entries[0].agent = false;
  list.entries[0].keep_alive = false;
  const EnablementPlan plan = plan_for(list, guest);
  ASSERT_EQ(plan.agents.size(), 1u);
  EXPECT_EQ(plan.agents[0].change, AgentChange::removed);
  ASSERT_EQ(plan.writes.size(), 1u)
      << "only enablement.json: the guard file still lists the program";
  guest.apply(plan);
  EXPECT_TRUE(guest.loaded.empty());
  EXPECT_NE(guest.files[test_layout().guard_file_path()].find("/opt/a/bin/a\n"), std::string::npos);
}

TEST(EnablementPlan, StrayPlistsInOurNamespaceAreRemovedOthersIgnored) {
  FakeGuest guest;
  const guest::GuestLayout layout = test_layout();
  guest.files[layout.launch_agents_dir() + "/dev.lume-unlock.old-thing.plist"] = "<plist/>";
  ObservedState observed = guest.observe(layout);
  observed.agent_plists["com.example.other.plist"] = "x";
  const EnablementPlan plan =
      plan_enablement(EnablementList{}, layout, AgentSettings{}, k_uid, observed).value_or_throw();
  ASSERT_EQ(plan.agents.size(), 1u);
  EXPECT_EQ(plan.agents[0].name, "old-thing");
  EXPECT_EQ(plan.agents[0].label, "dev.lume-unlock.old-thing");
  ASSERT_EQ(plan.removals.size(), 1u);
  EXPECT_EQ(plan.removals[0].path, layout.launch_agents_dir() + "/dev.lume-unlock.old-thing.plist");
}

TEST(EnablementPlan, AHundredEntriesAreOneBatchPerStep) {
  EnablementList small;
  small.entries = {agent_entry("e0")};
  EnablementList large;
  for (int i = 0; i < 100; ++i) {
    large.entries.push_back(agent_entry("e" + std::to_string(i)));
  }
  FakeGuest guest;
  const EnablementPlan plan = plan_for(large, guest);
  EXPECT_EQ(kinds(plan), kinds(plan_for(small, guest)))
      << "the number of steps does not grow with the list";
  EXPECT_EQ(step_of(plan, StepKind::stage_files).files.size(), 102u)
      << "100 plists, guard, enablement.json";
  EXPECT_EQ(step_of(plan, StepKind::lint_plists).commands.size(), 1u);
  EXPECT_EQ(step_of(plan, StepKind::lint_plists).commands[0].argv.size(), 102u);
  EXPECT_EQ(step_of(plan, StepKind::bootstrap_agents).commands.size(), 100u);
  EXPECT_EQ(plan.agents.size(), 100u);

  guest.apply(plan);
  EXPECT_EQ(guest.round_trips, plan.steps.size());
  EXPECT_EQ(guest.loaded.size(), 100u);
  EXPECT_TRUE(plan_for(large, guest).empty());
}

TEST(EnablementPlan, AFailureAtAnyStepLeavesThePreviousState) {
  EnablementList before;
  before.entries = {
      agent_entry("keep"), agent_entry("change"), agent_entry("remove"), exec_entry("tool")};
  EnablementList after;
  after.entries = {agent_entry("keep"), agent_entry("change"), agent_entry("add")};
  after.entries[1].args = {"--changed"};

  FakeGuest reference;
  reference.apply(plan_for(before, reference));
  reference.loaded.erase(
      "dev.lume-unlock.keep"); // unchanged but not loaded: "load" when labels are known
  for (bool with_labels : {false, true}) {
    const EnablementPlan plan = plan_for(after, reference, with_labels);
    ASSERT_EQ(kinds(plan).size(), 7u);
    for (const Step& step : plan.steps) {
      if (step.kind == StepKind::clean_staging) {
        continue; // everything is applied by then; nothing to roll back
      }
      FakeGuest guest = reference;
      guest.apply(plan, step.kind);
      EXPECT_EQ(guest.files, reference.files)
          << "failure at " << step_kind_name(step.kind) << " labels " << with_labels;
      EXPECT_EQ(guest.loaded, reference.loaded)
          << "failure at " << step_kind_name(step.kind) << " labels " << with_labels;
    }
    EXPECT_TRUE(plan.rollback_after(StepKind::clean_staging).empty());
  }
}

TEST(EnablementPlan, RollbackRestoresPreviousBytesAndDeletesNewFiles) {
  EnablementList before;
  before.entries = {agent_entry("a")};
  FakeGuest guest;
  guest.apply(plan_for(before, guest));
  EnablementList after;
  after.entries = {agent_entry("b")};
  const EnablementPlan plan = plan_for(after, guest);
  const std::vector<Step> undo = plan.rollback_after(StepKind::bootstrap_agents);
  std::vector<StepKind> undo_kinds;
  for (const Step& step : undo) {
    undo_kinds.push_back(step.kind);
  }
  EXPECT_EQ(undo_kinds,
            (std::vector<StepKind>{StepKind::bootout_agents,
                                   StepKind::restore_files,
                                   StepKind::bootstrap_agents,
                                   StepKind::clean_staging}));
  const Step& restore = undo[1];
  EXPECT_EQ(restore.commands,
            (std::vector<Command>{{{"rm", "-f", test_layout().agent_plist_path("b")}, false}}));
  ASSERT_EQ(restore.files.size(), 3u) << "guard file, enablement.json, a's plist";
  EXPECT_EQ(restore.files[2].path, test_layout().agent_plist_path("a"));
  EXPECT_EQ(restore.files[2].content, guest.files[test_layout().agent_plist_path("a")]);
  EXPECT_TRUE(undo[2].commands[0].may_fail)
      << "re-bootstrapping an agent that is still loaded is harmless";
}

TEST(EnablementPlan, UnchangedAgentThatIsNotLoadedIsLoadedWhenLabelsAreKnown) {
  EnablementList list;
  list.entries = {agent_entry("a"), agent_entry("b")};
  FakeGuest guest;
  guest.apply(plan_for(list, guest));
  guest.loaded.erase("dev.lume-unlock.a");

  EXPECT_TRUE(plan_for(list, guest).empty())
      << "without labels an unchanged plist is assumed loaded";
  const EnablementPlan plan = plan_for(list, guest, true);
  ASSERT_EQ(plan.agents.size(), 1u);
  EXPECT_EQ(plan.agents[0].change, AgentChange::not_loaded);
  EXPECT_FALSE(plan.agents[0].was_loaded);
  EXPECT_TRUE(plan.writes.empty());
  EXPECT_EQ(kinds(plan),
            (std::vector<StepKind>{
                StepKind::make_directories, StepKind::bootstrap_agents, StepKind::clean_staging}));
  EXPECT_EQ(plan.describe(), std::vector<std::string>{"load agent 'a' (dev.lume-unlock.a)"});
  guest.apply(plan);
  EXPECT_EQ(guest.loaded.count("dev.lume-unlock.a"), 1u);
  EXPECT_TRUE(plan_for(list, guest, true).empty());
}

TEST(EnablementPlan, AgentsThatAreNotLoadedAreNotBootedOut) {
  EnablementList list;
  list.entries = {agent_entry("a"), agent_entry("b")};
  FakeGuest guest;
  guest.apply(plan_for(list, guest));
  guest.loaded.erase("dev.lume-unlock.a");
  list.entries.erase(list.entries.begin());
  const EnablementPlan plan = plan_for(list, guest, true);
  ASSERT_EQ(plan.agents.size(), 1u);
  EXPECT_EQ(plan.agents[0].change, AgentChange::removed);
  EXPECT_FALSE(plan.agents[0].was_loaded);
  for (const Step& step : plan.steps) {
    EXPECT_NE(step.kind, StepKind::bootout_agents);
  }
  EXPECT_EQ(plan.removals.size(), 1u);
}

TEST(EnablementPlan, LoadedAgentOfOursWithoutAPlistIsBootedOut) {
  FakeGuest guest;
  guest.loaded["dev.lume-unlock.ghost"] = "<plist/>";
  guest.loaded["com.example.other"] = "<plist/>";
  const EnablementPlan plan = plan_for(EnablementList{}, guest, true);
  ASSERT_EQ(plan.agents.size(), 1u);
  EXPECT_EQ(plan.agents[0].change, AgentChange::removed);
  EXPECT_EQ(plan.agents[0].label, "dev.lume-unlock.ghost");
  EXPECT_TRUE(plan.removals.empty());
  EXPECT_EQ(
      step_of(plan, StepKind::bootout_agents).commands,
      (std::vector<Command>{{{"launchctl", "bootout", "gui/501/dev.lume-unlock.ghost"}, true}}));
  guest.apply(plan);
  EXPECT_EQ(guest.loaded.count("dev.lume-unlock.ghost"), 0u);
  EXPECT_EQ(guest.loaded.count("com.example.other"), 1u);
}

TEST(EnablementPlan, InvalidListIsRefused) {
  EnablementList list;
  list.entries = {agent_entry("a"), agent_entry("a")};
  const auto plan = plan_enablement(list, test_layout(), AgentSettings{}, k_uid, ObservedState{});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().message(), "enablement entry 'a': name is used twice (entries 1 and 2)");
}

TEST(EnablementPlan, ShimUpgradeRewritesEveryAgent) {
  EnablementList list;
  list.entries = {agent_entry("a"), agent_entry("b"), exec_entry("c")};
  FakeGuest guest;
  guest.apply(plan_for(list, guest));
  const guest::GuestLayout upgraded =
      guest::GuestLayout::make("/Users/Test User", std::string(64, 'd')).value_or_throw();
  const EnablementPlan plan =
      plan_enablement(list, upgraded, AgentSettings{}, k_uid, guest.observe(upgraded))
          .value_or_throw();
  ASSERT_EQ(plan.agents.size(), 2u);
  EXPECT_EQ(plan.agents[0].change, AgentChange::changed);
  EXPECT_EQ(plan.agents[1].change, AgentChange::changed);
  EXPECT_EQ(plan.writes.size(), 2u) << "two plists; guard file and enablement.json are unchanged";
}

} // namespace
} // namespace lume_unlock::enablement

namespace lume_unlock::enablement {
namespace {

TEST(EnablementPlan, AddedAgentWhoseLabelIsStillLoadedIsBootedOutFirst) {
  EnablementList list;
  list.entries = {agent_entry("a")};
  FakeGuest guest;
  guest.apply(plan_for(list, guest));
  // An interrupted apply: the plist is gone but launchd still has the job.
  guest.files.erase(test_layout().agent_plist_path("a"));
  const EnablementPlan plan = plan_for(list, guest, true);
  ASSERT_EQ(plan.agents.size(), 1u);
  EXPECT_EQ(plan.agents[0].change, AgentChange::added);
  EXPECT_TRUE(plan.agents[0].was_loaded);
  EXPECT_EQ(kinds(plan),
            (std::vector<StepKind>{StepKind::make_directories,
                                   StepKind::stage_files,
                                   StepKind::lint_plists,
                                   StepKind::bootout_agents,
                                   StepKind::install_files,
                                   StepKind::bootstrap_agents,
                                   StepKind::clean_staging}));
  guest.apply(plan);
  EXPECT_EQ(guest.loaded.count("dev.lume-unlock.a"), 1u);
  EXPECT_TRUE(plan_for(list, guest, true).empty());
}

} // namespace
} // namespace lume_unlock::enablement

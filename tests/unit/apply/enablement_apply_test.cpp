// The enablement executor's parsing and step handling over a scripted session.
#include "apply/enablement_apply.hpp"
#include "apply/llama_runs.hpp"
#include "enablement/enablement_list.hpp"
#include "unit/guest/scripted_session.hpp"
#include "unit/macho/fixture.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace lume_unlock::apply {
namespace {

using test::ScriptedSession;

std::string record(const std::string& tag, const std::string& name, const std::string& content) {
  return tag + " " + std::to_string(content.size()) + " " + name + "\n" + content;
}

TEST(Observation, ParsesEveryRecordKind) {
  const std::string print =
      "gui/501 = {\n\ttype = login\n\tservices = {\n\t\t0\t-\tcom.apple.x\n"
      "\t\t123\t0\tdev.lume-unlock.a\n\t\t-\t1\tdev.lume-unlock.b\n\t}\n"
      "\tdisabled services = {\n\t\t\"dev.lume-unlock.c\" => disabled\n\t}\n}\n";
  const std::string output = record("enablement", "-", "{\"x\":1}\n") +
                             record("guard", "-", "# g\n/bin/a\n") +
                             record("shim-record", "-", "{}") +
                             record("plist", "dev.lume-unlock.a.plist", "<plist a>\nwith lines\n") +
                             "shim-dir 0 abc\n" + record("labels", "-", print);
  auto parsed = parse_observation(output);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  const GuestEnablement& g = parsed.value();
  EXPECT_EQ(g.state.enablement_json, "{\"x\":1}\n");
  EXPECT_EQ(g.state.guard_file, "# g\n/bin/a\n");
  EXPECT_EQ(g.shim_record, "{}");
  EXPECT_EQ(g.state.agent_plists.at("dev.lume-unlock.a.plist"), "<plist a>\nwith lines\n");
  EXPECT_EQ(g.shim_dirs, std::set<std::string>{"abc"});
  EXPECT_EQ(g.state.loaded_labels,
            (std::set<std::string>{"dev.lume-unlock.a", "dev.lume-unlock.b"}))
      << "only the services block counts";
}

TEST(Observation, AbsentFilesStayAbsentAndUnknownLabelsStayUnknown) {
  auto parsed = parse_observation("");
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed.value().state.enablement_json);
  EXPECT_FALSE(parsed.value().state.guard_file);
  EXPECT_FALSE(parsed.value().state.loaded_labels);
}

TEST(Observation, NoGuiRecordMeansNoGuiSession) {
  auto without = parse_observation("no-gui 0 -\n");
  ASSERT_TRUE(without.ok()) << without.error().message();
  EXPECT_FALSE(without.value().gui_session);
  EXPECT_FALSE(without.value().state.loaded_labels);
  auto with = parse_observation(record("labels", "-", "gui/501 = {\n}\n"));
  ASSERT_TRUE(with.ok());
  EXPECT_TRUE(with.value().gui_session);
}

TEST(Observation, MalformedOutputIsAGuestError) {
  auto truncated = parse_observation("guard 10 -\nshort");
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(
      truncated.error().message(),
      "reading the enablement state of the guest: output ends inside the record 'guard 10 -'");
  auto garbage = parse_observation("hello\n");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error().category(), ErrorCategory::guest);
}

TEST(Observation, AFileOverTheLimitIsRefusedNamingItsSizeAndTheLimit) {
  auto parsed = parse_observation("oversize 0 enablement 2000000\n");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().category(), ErrorCategory::guest);
  EXPECT_EQ(parsed.error().message(),
            "reading the enablement state of the guest: its enablement file is 2000000 bytes, "
            "more than the 1 MiB lume-unlock reads");
  EXPECT_FALSE(parse_observation("oversize 0 guard 12x\n").ok());
  EXPECT_FALSE(parse_observation("oversize 0 guard\n").ok());
}

TEST(Observation, CommandQuotesTheHomeAndAsksLaunchdForTheUsersDomain) {
  auto command = observe_command("/Users/o'brien x", 501);
  ASSERT_TRUE(command.ok());
  EXPECT_NE(command.value().find(
                "'/Users/o'\\''brien x/Library/Application Support/LumeUnlock/enablement.json'"),
            std::string::npos);
  EXPECT_NE(command.value().find("launchctl print gui/501"), std::string::npos);
}

InstalledShim shim_record(const std::string& home) {
  InstalledShim shim;
  shim.bundle_version = "1.0";
  shim.platform = "darwin-arm64";
  shim.inject_env = "DYLD_INSERT_LIBRARIES";
  const std::string sha(64, 'a');
  shim.shim = {home + "/Library/Application Support/LumeUnlock/shim/" + sha +
                   "/liblume-unlock-shim.dylib",
               sha};
  shim.probe = InstalledFile{home + "/Library/Application Support/LumeUnlock/bin/lume-unlock-probe",
                             std::string(64, 'b')};
  return shim;
}

TEST(InstalledShimRecord, RoundTripsAndNamesItsArch) {
  const InstalledShim shim = shim_record("/Users/lume");
  auto parsed = parse_installed_shim(render_installed_shim(shim), "current.json");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed.value(), shim);
  EXPECT_EQ(shim.arch(), "arm64");
  EXPECT_EQ(shim.shim_file_name(), "liblume-unlock-shim.dylib");
  auto bad = parse_installed_shim("{\"schema\":\"other\"}", "current.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().category(), ErrorCategory::verification);
  EXPECT_EQ(bad.error().message(),
            "reading current.json: /schema: expected 'lume-unlock/installed-shim/v1', got 'other'");
  nlohmann::json document = nlohmann::json::parse(render_installed_shim(shim));
  document["support"] = nlohmann::json::array({{{"path", "/x"}, {"sha256", 7}}});
  EXPECT_EQ(parse_installed_shim(document.dump(), "current.json").error().message(),
            "reading current.json: /support/0/sha256: expected a string, got an integer")
      << "our own message, not nlohmann's what()";
  document["support"][0] = {{"path", "x"}, {"sha256", std::string(64, 'a')}};
  EXPECT_EQ(parse_installed_shim(document.dump(), "current.json").error().why(),
            "/support/0/path: expected an absolute guest path, got 'x'");
}

GuestEnablement observed_with_shim(const std::string& home) {
  GuestEnablement observed;
  observed.shim_record = render_installed_shim(shim_record(home));
  observed.shim_dirs = {std::string(64, 'a')};
  return observed;
}

guest::GuestFacts facts_for(const std::string& home) {
  guest::GuestFacts facts;
  facts.home = home;
  facts.uid = 501;
  facts.kernel = "Darwin";
  facts.machine = "arm64";
  return facts;
}

TEST(EnablementTarget, MissingShimDirectoryPointsAtCreate) {
  GuestEnablement observed = observed_with_shim("/Users/lume");
  observed.shim_dirs.clear();
  auto target = enablement_target(observed, facts_for("/Users/lume"), "vm1");
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.error().message(),
            "enablement list of VM 'vm1': the shim is not installed in the guest (its directory "
            "shim/" +
                std::string(64, 'a') + " is missing)");
  EXPECT_EQ(target.error().hint(), "install it with 'lume-unlock create vm1'");
}

TEST(ExecCommandLine, CarriesTheAgentEnvironmentQuoted) {
  auto target =
      enablement_target(observed_with_shim("/Users/lume"), facts_for("/Users/lume"), "vm1");
  ASSERT_TRUE(target.ok()) << target.error().message();
  enablement::EnablementEntry entry;
  entry.name = "x";
  entry.program = "/opt/x y/bin/x";
  entry.args = {"--a", "it's"};
  entry.env = {{"ODD", "$(z) & 'q'"}};
  auto line = exec_command_line(entry, target.value(), {"more"});
  ASSERT_TRUE(line.ok()) << line.error().message();
  const std::string support = "/Users/lume/Library/Application Support/LumeUnlock";
  EXPECT_EQ(line.value(),
            "cd / && DYLD_INSERT_LIBRARIES='" + support + "/shim/" + std::string(64, 'a') +
                "/liblume-unlock-shim.dylib' LUME_METAL_APPLE_FAMILY_MAX='1009' "
                "LUME_METAL_MAX_THREADGROUP_MEMORY='65536' LUME_UNLOCK_ENABLEMENT='" +
                support +
                "/enabled-executables' ODD='$(z) & '\\''q'\\''' '/opt/x y/bin/x' '--a' 'it'\\''s' "
                "'more'");
}

TEST(ExecCommandLine, TheStockLineUnsetsTheInjectionAndKeepsOnlyTheEntrysEnv) {
  auto target =
      enablement_target(observed_with_shim("/Users/lume"), facts_for("/Users/lume"), "vm1");
  ASSERT_TRUE(target.ok()) << target.error().message();
  enablement::EnablementEntry entry;
  entry.name = "x";
  entry.program = "/opt/x y/bin/x";
  entry.args = {"--a"};
  entry.env = {{"ODD", "$(z) & 'q'"}};
  auto line = stock_command_line(entry, target.value(), {"-o", "json"});
  ASSERT_TRUE(line.ok()) << line.error().message();
  EXPECT_EQ(line.value(),
            "cd / && unset DYLD_INSERT_LIBRARIES && ODD='$(z) & '\\''q'\\''' "
            "'/opt/x y/bin/x' '--a' '-o' 'json'");
  // A program path holding '=' stays the program (env(1) would read it as an assignment).
  entry.program = "/opt/a=b/bin/x";
  auto with_equals = stock_command_line(entry, target.value(), {});
  ASSERT_TRUE(with_equals.ok()) << with_equals.error().message();
  EXPECT_EQ(with_equals.value(),
            "cd / && unset DYLD_INSERT_LIBRARIES && ODD='$(z) & '\\''q'\\''' '/opt/a=b/bin/x' "
            "'--a'");
  // An entry whose env clashes with lume-unlock's is refused on both sides alike.
  entry.env = {{"LUME_UNLOCK_ENABLEMENT", "/tmp/other"}};
  EXPECT_FALSE(stock_command_line(entry, target.value(), {}).ok());
  EXPECT_FALSE(exec_command_line(entry, target.value(), {}).ok());
}

TEST(GuestBench, BothRunsPassVerboseAndAFailedRunWithABrokenLogIsAVerdict) {
  auto target =
      enablement_target(observed_with_shim("/Users/lume"), facts_for("/Users/lume"), "vm1");
  ASSERT_TRUE(target.ok()) << target.error().message();
  enablement::EnablementEntry entry;
  entry.name = "llama-bench";
  entry.program = "/opt/llama/llama-bench";
  verify::BenchRequest request;
  request.model = "/m/q.gguf";
  // The model check passes; the stock run fails the way llama-bench does after Metal failed.
  ScriptedSession session;
  session.answers = {{0, "", ""},
                     {1,
                      "",
                      "ggml_metal_device_init: GPU name:   MTL0 (Apple Paravirtual device)\n"
                      "ggml_metal_buffer_map: error: failed to initialize residency set\n"
                      "llama_bench: error: failed to load model '/m/q.gguf'\n"}};
  auto broken = run_guest_bench(session, entry, target.value(), request, nullptr);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().category(), ErrorCategory::verification);
  EXPECT_NE(broken.error().message().find(
                "its Metal log is broken: line 2 'ggml_metal_buffer_map: error: failed to "
                "initialize residency set': Metal could not make a residency set on this device; "
                "set env: {GGML_METAL_NO_RESIDENCY: \"1\"}"),
            std::string::npos)
      << broken.error().message();
  ASSERT_EQ(session.commands.size(), 2u);
  EXPECT_NE(session.commands[1].find("'-o' 'json' '-v'"), std::string::npos) << session.commands[1];
  // Any other failed run stays a guest fault with its last lines.
  ScriptedSession other;
  other.answers = {{0, "", ""}, {1, "", "llama_bench: error: failed to load model 'x'\n"}};
  auto failed = run_guest_bench(other, entry, target.value(), request, nullptr);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().category(), ErrorCategory::guest);
}

// llama-perplexity prints ggml-metal's lines raw on stderr: Metal's failure lines in the GPU run
// are a verdict, whether the tool then gave up or still printed figures.
TEST(GuestPerplexity, MetalFailureLinesInTheGpuRunAreKeptAsABrokenLog) {
  auto target =
      enablement_target(observed_with_shim("/Users/lume"), facts_for("/Users/lume"), "vm1");
  ASSERT_TRUE(target.ok()) << target.error().message();
  enablement::EnablementEntry entry;
  entry.name = "llama-perplexity";
  entry.program = "/opt/llama/llama-perplexity";
  verify::BenchRequest request;
  request.model = "/m/q.gguf";
  const std::string failed_buffer =
      "ggml_metal_device_init: GPU name:   MTL0 (Apple Paravirtual device)\n"
      "ggml_metal_synchronize: error: command buffer 0 failed with status 5\n"
      "error: Internal Error (0000000e:Internal Error)\n";
  ScriptedSession gave_up; // the stock run, then the GPU run exiting 1 (the text is an upload)
  gave_up.answers = {{0, "[1]9.8731,\n", "Final estimate: PPL = 9.8731 +/- 0.1\n"},
                     {1, "", failed_buffer}};
  auto broken = run_guest_perplexity(gave_up, entry, target.value(), "/Users/lume", request, {});
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().category(), ErrorCategory::verification);
  EXPECT_NE(broken.error().message().find("llama-perplexity unlocked run of entry "
                                          "'llama-perplexity': its Metal log is broken: line 2 "
                                          "'ggml_metal_synchronize: error: command buffer 0"),
            std::string::npos)
      << broken.error().message();

  ScriptedSession went_on; // the GPU run still printed figures
  went_on.answers = {{0, "[1]9.8731,\n", "Final estimate: PPL = 9.8731 +/- 0.1\n"},
                     {0, "[1]9.8731,\n", failed_buffer + "Final estimate: PPL = 9.8731 +/- 0.1\n"}};
  auto kept = run_guest_perplexity(went_on, entry, target.value(), "/Users/lume", request, {});
  ASSERT_TRUE(kept.ok()) << kept.error().message();
  EXPECT_EQ(kept.value().unlocked.log.verdict, verify::LlamaLogVerdict::broken);
  EXPECT_EQ(kept.value().stock.log.verdict, verify::LlamaLogVerdict::no_metal_log);
  EXPECT_EQ(went_on.uploads.at("/Users/lume/" + std::string(verify::k_perplexity_text_guest_path)),
            verify::perplexity_text());
}

TEST(ExecutePlan, FailedStepRunsTheRollbackAndNamesTheEntry) {
  auto target =
      enablement_target(observed_with_shim("/Users/lume"), facts_for("/Users/lume"), "vm1");
  ASSERT_TRUE(target.ok());
  enablement::EnablementEntry entry;
  entry.name = "srv";
  entry.program = "/opt/srv";
  auto plan = enablement::plan_enablement(
      enablement::EnablementList{{entry}}, target.value().layout, target.value().settings, 501, {});
  ASSERT_TRUE(plan.ok());
  ScriptedSession session;
  // make_directories, stage upload is not a command, payload install, lint, install_files ok;
  // bootstrap fails on command 0 (the only agent).
  for (int i = 0; i < 4; ++i) {
    session.answers.push_back({0, "", ""});
  }
  session.answers.push_back(
      {1, "lume-unlock-step-failed 0\n", "Bootstrap failed: 5: Input/output error\n"});
  auto report = execute_plan(session, plan.value());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().category(), ErrorCategory::guest);
  EXPECT_EQ(report.error().message(),
            "applying the enablement list: step 'bootstrap-agents' for enablement entry 'srv': "
            "Bootstrap failed: 5: Input/output error");
  EXPECT_EQ(report.error().hint(),
            "the previous enablement was put back; fix the cause and run the command again");
  // After the failure: bootout of the new agent, restore (rm of new files), clean staging.
  const std::string& last = session.commands.back();
  EXPECT_NE(last.find("'rm' '-rf' '/Users/lume/Library/Application Support/LumeUnlock/staging'"),
            std::string::npos)
      << last;
  bool booted_out = false;
  for (const std::string& command : session.commands) {
    booted_out =
        booted_out ||
        command.find("'launchctl' 'bootout' 'gui/501/dev.lume-unlock.srv'") != std::string::npos;
  }
  EXPECT_TRUE(booted_out);
}

TEST(Precheck, NoCommandEachProgramsHeadersOverSftp) {
  const InstalledShim shim = shim_record("/Users/lume");
  enablement::EnablementEntry a;
  a.name = "a";
  a.program = "/opt/a";
  enablement::EnablementEntry b = a;
  b.name = "b";
  b.program = "/opt/b";
  {
    ScriptedSession session;
    session.files["/opt/a"] = test::macho_fixture("fat-arm64-x86_64");
    session.files["/opt/b"] = test::macho_fixture("arm64-runtime-both");
    auto checks = precheck_entries(session, {a, b}, shim);
    ASSERT_TRUE(checks.ok()) << checks.error().message();
    EXPECT_TRUE(session.commands.empty()) << "no tool in the guest, not even sh";
    ASSERT_EQ(checks.value().size(), 2u);
    EXPECT_EQ(checks.value()[0].entry, "a");
    EXPECT_EQ(checks.value()[0].verdict.slice, "arm64");
    EXPECT_EQ(checks.value()[0].verdict.archs, "x86_64 arm64");
    EXPECT_EQ(checks.value()[1].program, "/opt/b");
    EXPECT_FALSE(checks.value()[1].verdict.refused());
  }
  {
    ScriptedSession session;
    session.files["/opt/a"] = test::macho_fixture("arm64");
    session.files["/opt/b"] = test::macho_fixture("arm64-runtime");
    auto result = precheck_entries(session, {a, b}, shim);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().category(), ErrorCategory::verification);
    EXPECT_EQ(result.error().message(),
              "enablement entry 'b': program '/opt/b' cannot be unlocked (hardened-runtime): its "
              "arm64 slice is signed with the hardened runtime and without "
              "com.apple.security.cs.allow-dyld-environment-variables, so dyld ignores "
              "DYLD_INSERT_LIBRARIES for it");
  }
  {
    ScriptedSession session;
    session.files["/opt/a"] = "#!/bin/sh\nexec /opt/real\n";
    auto result = precheck_entries(session, {a}, shim);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().category(), ErrorCategory::usage);
    EXPECT_EQ(result.error().message(),
              "enablement entry 'a': program '/opt/a' cannot be unlocked (not-mach-o): the "
              "program is a script (#!), not a Mach-O executable; macOS injects libraries into "
              "Mach-O programs only");
  }
}

TEST(ExecutePlan, BootstrapsAreWrappedInTheRetryAndMayFailCommandsAreSilenced) {
  auto target =
      enablement_target(observed_with_shim("/Users/lume"), facts_for("/Users/lume"), "vm1");
  ASSERT_TRUE(target.ok());
  enablement::EnablementEntry entry;
  entry.name = "srv";
  entry.program = "/opt/srv";
  enablement::ObservedState observed;
  observed.loaded_labels = std::set<std::string>{"dev.lume-unlock.old"};
  auto plan = enablement::plan_enablement(enablement::EnablementList{{entry}},
                                          target.value().layout,
                                          target.value().settings,
                                          501,
                                          observed);
  ASSERT_TRUE(plan.ok());
  ScriptedSession session;
  auto report = execute_plan(session, plan.value());
  ASSERT_TRUE(report.ok()) << report.error().message();
  std::string all;
  for (const std::string& command : session.commands) {
    all += command + "\n";
  }
  EXPECT_NE(all.find("bootstrap 'launchctl' 'bootstrap' 'gui/501' "
                     "'/Users/lume/Library/LaunchAgents/dev.lume-unlock.srv.plist' || fail 0"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("*'failed: 5: '* | *'failed: 37: '*)"), std::string::npos)
      << "errors 5 and 37 are retried: " << all;
  EXPECT_NE(all.find("'launchctl' 'bootout' 'gui/501/dev.lume-unlock.old' >/dev/null 2>&1 || :"),
            std::string::npos)
      << all;
}

TEST(GuiSession, RequiredOnlyWhenThePlanBootstrapsAnAgent) {
  auto target =
      enablement_target(observed_with_shim("/Users/lume"), facts_for("/Users/lume"), "vm1");
  ASSERT_TRUE(target.ok());
  enablement::EnablementEntry entry;
  entry.name = "srv";
  entry.program = "/opt/srv";
  auto plan_for = [&](const enablement::EnablementList& list) {
    auto plan = enablement::plan_enablement(
        list, target.value().layout, target.value().settings, 501, enablement::ObservedState{});
    EXPECT_TRUE(plan.ok());
    return plan.value();
  };
  GuestEnablement no_gui;
  no_gui.gui_session = false;
  const Status refused = require_gui_session(plan_for({{entry}}), no_gui, 501);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().category(), ErrorCategory::guest);
  EXPECT_NE(refused.error().message().find("no user is logged in to the guest's GUI"),
            std::string::npos)
      << refused.error().message();
  EXPECT_NE(refused.error().hint().find("automatic login"), std::string::npos);
  EXPECT_TRUE(require_gui_session(plan_for({{entry}}), GuestEnablement{}, 501).ok());
  EXPECT_TRUE(require_gui_session(plan_for({}), no_gui, 501).ok()) << "nothing to bootstrap";
}

TEST(ExecutePlan, EmptyPlanRunsNothing) {
  ScriptedSession session;
  auto report = execute_plan(session, enablement::EnablementPlan{});
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report.value().changed);
  EXPECT_TRUE(session.commands.empty());
}

} // namespace
} // namespace lume_unlock::apply

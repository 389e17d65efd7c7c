// The acceptance runner's step table against a stand-in executable (a shell script that prints
// its arguments and a secret, and fails the steps it is told to): which steps run, which are
// skipped and why, what the folder holds, and that the secret is scrubbed from all of it.
#include "pipeline/acceptance.hpp"
#include "support/file_io.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace lume_unlock::pipeline {
namespace {

namespace fs = std::filesystem;

class AcceptanceRunner : public ::testing::Test {
protected:
  void SetUp() override {
    // argv: GLOBAL… --json COMMAND NAME …; FAIL_STEP names the command that exits 6, printing
    // FAIL_JSON as its only output when that is set.
    test::write_file(
        dir / "lume-unlock",
        "#!/bin/sh\n"
        "while [ \"$1\" != --json ]; do shift; done; shift\n"
        "if [ \"$1\" = \"$FAIL_STEP\" ] && [ -n \"$FAIL_JSON\" ]; then echo \"$FAIL_JSON\"; exit "
        "6; fi\n"
        "echo \"{\\\"command\\\": \\\"$1\\\", \\\"args\\\": \\\"$*\\\"}\"\n"
        "echo \"guest password is $LUME_UNLOCK_GUEST_PASSWORD\" >&2\n"
        "if [ \"$1\" = report ]; then mkdir -p \"$4\"; "
        "echo \"report $LUME_UNLOCK_GUEST_PASSWORD\" > \"$4/r.txt\"; fi\n"
        "if [ \"$1\" = \"$FAIL_STEP\" ]; then echo 'lume-unlock: error: it broke' >&2; "
        "exit 6; fi\n",
        0755);
    test::write_file(
        dir / "recipe.yaml",
        "source:\n  image: 127.0.0.1:5000/lume/tahoe:latest\n"
        "enablement:\n  - name: llama-bench\n    program: /opt/llama/llama-bench\n"
        "    agent: false\n"
        "  - {name: llama-perplexity, program: /opt/llama/llama-perplexity}\n"
        "bench: {model: /m.gguf, min_speedup: 2, max_perplexity_drift: 1%, threads: 8,\n"
        "        gpu_layers: -1}\n");
    options.executable = dir / "lume-unlock";
    options.global_args = {"--lume-url", "http://127.0.0.1:1"};
    options.vm = "acc";
    options.recipe = dir / "recipe.yaml";
    options.connection_args = {"--ssh-password-env", "LUME_UNLOCK_GUEST_PASSWORD"};
    options.out_dir = dir / "out";
    for (const std::string& name : acceptance_secret_variables("")) {
      unsetenv(name.c_str());
    }
    setenv("LUME_UNLOCK_GUEST_PASSWORD", "s3cret-pw", 1);
    options.secrets = acceptance_secrets("LUME_UNLOCK_GUEST_PASSWORD");
  }
  void TearDown() override {
    unsetenv("LUME_UNLOCK_GUEST_PASSWORD");
    unsetenv("FAIL_STEP");
    unsetenv("FAIL_JSON");
  }

  AcceptanceReport run() {
    auto report =
        run_acceptance(options, [&](const std::string& step) { started.push_back(step); });
    EXPECT_TRUE(report.ok()) << (report.ok() ? "" : report.error().message());
    return report.ok() ? std::move(report).value() : AcceptanceReport{};
  }

  static std::vector<std::string> summary(const AcceptanceReport& report) {
    std::vector<std::string> lines;
    for (const auto& step : report.steps) {
      lines.push_back(step.name + " " + acceptance_status_name(step.status) +
                      (step.detail.empty() ? "" : " (" + step.detail + ")"));
    }
    return lines;
  }

  test::TempDir dir{"acceptance-runner"};
  AcceptanceOptions options;
  std::vector<std::string> started;
};

TEST_F(AcceptanceRunner, RunsEveryStepInOrderAndWritesTheFolderScrubbed) {
  const AcceptanceReport report = run();
  EXPECT_EQ(summary(report),
            (std::vector<std::string>{"preflight pass",
                                      "create pass",
                                      "verify pass",
                                      "bench pass",
                                      "report pass",
                                      "remove pass"}));
  EXPECT_EQ(
      started,
      (std::vector<std::string>{"preflight", "create", "verify", "bench", "report", "remove"}));
  EXPECT_TRUE(report.passed());
  EXPECT_FALSE(report.vm_kept);
  // The bench step carries the recipe's bench: block (its -t and -ngl too, as create --bench
  // runs them) and gate; remove deletes the VM.
  EXPECT_EQ(
      test::slurp(options.out_dir + "/04-bench.stdout"),
      "{\"command\": \"bench\", \"args\": \"bench acc --entry llama-bench --model /m.gguf -p 512 "
      "-n 128 -r 3 --perplexity-entry llama-perplexity --threads 8 --n-gpu-layers -1 "
      "--max-perplexity-drift 0.01 "
      "--min-speedup 2 --ssh-password-env LUME_UNLOCK_GUEST_PASSWORD\"}\n");
  ASSERT_EQ(report.steps.size(), 6U);
  EXPECT_EQ(report.steps.back().command,
            (std::vector<std::string>{options.executable,
                                      "--lume-url",
                                      "http://127.0.0.1:1",
                                      "--json",
                                      "remove",
                                      "acc",
                                      "--delete-vm",
                                      "--ssh-password-env",
                                      "LUME_UNLOCK_GUEST_PASSWORD"}));
  EXPECT_EQ(test::slurp(options.out_dir + "/01-preflight.stderr"),
            "guest password is [scrubbed]\n");
  EXPECT_EQ(nlohmann::json::parse(test::slurp(options.out_dir + "/acceptance.json")),
            to_json(report));
  // What the report step wrote into the folder itself is scrubbed too.
  EXPECT_EQ(test::slurp(options.out_dir + "/report/r.txt"), "report [scrubbed]\n");
  for (const auto& entry : fs::recursive_directory_iterator(options.out_dir)) {
    if (!entry.is_regular_file()) {
      continue;
    }
    EXPECT_EQ(test::slurp(entry.path()).find("s3cret-pw"), std::string::npos) << entry.path();
  }
}

TEST_F(AcceptanceRunner, AFailedStepSkipsTheRestButTheVmIsStillRemoved) {
  setenv("FAIL_STEP", "verify", 1);
  const AcceptanceReport report = run();
  EXPECT_EQ(summary(report),
            (std::vector<std::string>{"preflight pass",
                                      "create pass",
                                      "verify fail (lume-unlock: error: it broke)",
                                      "bench skipped (an earlier step failed)",
                                      "report skipped (an earlier step failed)",
                                      "remove pass"}));
  EXPECT_FALSE(report.passed());
  ASSERT_EQ(report.steps.size(), 6U);
  EXPECT_EQ(report.steps[2].exit_status, 6);
  EXPECT_NE(test::slurp(options.out_dir + "/README.txt")
                .find("verify: fail (lume-unlock: error: it broke)\n"),
            std::string::npos);
}

TEST_F(AcceptanceRunner, AFailedPreflightCreatesNothingSoThereIsNothingToRemove) {
  setenv("FAIL_STEP", "doctor", 1);
  const AcceptanceReport report = run();
  ASSERT_EQ(report.steps.size(), 6U);
  EXPECT_EQ(report.steps.front().status, AcceptanceStatus::fail);
  EXPECT_EQ(summary(report).back(), "remove skipped (no VM was created)");
  EXPECT_FALSE(report.vm_kept);
}

TEST_F(AcceptanceRunner, AFailureIsSummedUpFromTheJsonErrorOrTheFailedDoctorChecks) {
  setenv("FAIL_STEP", "create", 1);
  setenv("FAIL_JSON",
         R"({"error": {"category": "guest", "message": "connect to VM 'acc': refused"}})",
         1);
  AcceptanceReport report = run();
  ASSERT_EQ(report.steps.size(), 6U);
  EXPECT_EQ(report.steps[1].detail, "connect to VM 'acc': refused");
  EXPECT_STREQ(vm_outcome(report), "removed");

  setenv("FAIL_STEP", "doctor", 1);
  setenv("FAIL_JSON",
         R"({"checks": [{"name": "lume", "status": "fail", "detail": "cannot connect"},)"
         R"( {"name": "disk", "status": "ok", "detail": "fine"},)"
         R"( {"name": "bundle", "status": "fail", "detail": "no darwin-arm64"}], "ok": false})",
         1);
  options.out_dir += "-2";
  report = run();
  ASSERT_EQ(report.steps.size(), 6U);
  EXPECT_EQ(report.steps[0].detail, "lume: cannot connect; bundle: no darwin-arm64");
  EXPECT_STREQ(vm_outcome(report), "never created");
}

TEST_F(AcceptanceRunner, KeepSkipsTheRemoveAndSaysTheVmIsKept) {
  options.keep = true;
  const AcceptanceReport report = run();
  ASSERT_EQ(report.steps.size(), 6U);
  EXPECT_EQ(summary(report).back(), "remove skipped (the VM is kept (--keep))");
  EXPECT_TRUE(report.vm_kept);
  EXPECT_STREQ(vm_outcome(report), "kept");
  EXPECT_TRUE(report.passed());
}

TEST_F(AcceptanceRunner, AFailedReportFailsTheRunAndTheVmIsStillRemoved) {
  setenv("FAIL_STEP", "report", 1);
  const AcceptanceReport report = run();
  ASSERT_EQ(report.steps.size(), 6U);
  EXPECT_EQ(summary(report)[4], "report fail (lume-unlock: error: it broke)");
  EXPECT_EQ(summary(report)[5], "remove pass");
  EXPECT_FALSE(report.passed());
  EXPECT_FALSE(report.vm_kept);
}

TEST_F(AcceptanceRunner, AFolderThatHoldsARunIsRefused) {
  run();
  auto again = run_acceptance(options, [](const std::string&) {});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().message(),
            "acceptance folder '" + options.out_dir +
                "': it already holds an acceptance run "
                "(acceptance.json)");
}

TEST(AcceptanceSecrets, NameThePasswordVariablesAndTheRegistryCredentials) {
  for (const std::string& name : acceptance_secret_variables("MY_PW")) {
    unsetenv(name.c_str());
  }
  EXPECT_EQ(acceptance_secret_variables("MY_PW"),
            (std::vector<std::string>{"LUME_UNLOCK_GUEST_PASSWORD",
                                      "MY_PW",
                                      "GHCR_TOKEN",
                                      "GITHUB_TOKEN",
                                      "GHCR_USERNAME",
                                      "GITHUB_USERNAME",
                                      "LUME_UNLOCK_KEY_PASSPHRASE"}));
  EXPECT_EQ(acceptance_secret_variables("LUME_UNLOCK_GUEST_PASSWORD").size(), 6U);
  setenv("MY_PW", "pw-value", 1);
  setenv("GHCR_TOKEN", "tok-value", 1);
  EXPECT_EQ(acceptance_secrets("MY_PW"), (std::vector<std::string>{"pw-value", "tok-value"}));
  unsetenv("MY_PW");
  unsetenv("GHCR_TOKEN");
}

} // namespace
} // namespace lume_unlock::pipeline

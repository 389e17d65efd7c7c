// doctor --acceptance end to end: the real lume-unlock executable runs its own commands as
// child processes against lume-sim, guest-sim (with llama.cpp prepared as a real image holds
// it) and docker-registry on TLS, and writes the folder a user attaches to a bug report.
#include "lume/client.hpp"
#include "pipeline_fixture.hpp"
#include "support/file_io.hpp"

#include <filesystem>
#include <regex>

namespace lume_unlock::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_vm = "accept-vm";

class Acceptance : public PipelineWorld {
protected:
  /// The world, llama.cpp in the guest, and a recipe benching with `bench`. The recipe lives in
  /// a folder named after the registry token and the guest password, so every step that prints
  /// the recipe's path would leak both: the scrubbing is tested on real output.
  void start_acceptance_world(const std::string& bench) {
    start_world();
    prepare_llama_cpp_release();
    write_bench_recipe(bench);
    password = *guest.info().password;
    ASSERT_TRUE(std::regex_match(password, std::regex("[A-Za-z0-9._-]+"))) << password;
    const fs::path folder = files / ("recipe-" + token + "-" + password);
    fs::create_directories(folder);
    fs::rename(recipe, folder / "recipe.yaml");
    recipe = (folder / "recipe.yaml").string();
  }

  CommandOutput acceptance(std::vector<std::string> extra, bool json = true) {
    std::vector<std::string> argv = {
        LUME_UNLOCK_BINARY, "--lume-url", lume->url(), "--state-dir", state.path()};
    if (json) {
      argv.push_back("--json");
    }
    std::vector<std::string> command = {"doctor",
                                        "--acceptance",
                                        "--recipe",
                                        recipe,
                                        "--bundle",
                                        SHIM_BUNDLE_DIR,
                                        "--name",
                                        k_vm,
                                        "--out",
                                        out,
                                        "--ssh-port",
                                        std::to_string(ssh_port),
                                        "--ssh-user",
                                        guest.info().user,
                                        "--ssh-password-env",
                                        "LUME_UNLOCK_PIPELINE_TEST_PW"};
    argv.insert(argv.end(), command.begin(), command.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_command(argv, {{"GHCR_TOKEN", token}});
  }

  bool vm_exists() {
    lume::ClientOptions options;
    options.base_url = lume->url();
    lume::LumeClient client(options);
    auto found = client.find(lume::VmRef{k_vm});
    EXPECT_TRUE(found.ok());
    return found.ok() && found.value().has_value();
  }

  static const nlohmann::json& step(const nlohmann::json& doc, const std::string& name) {
    for (const auto& s : doc.at("steps")) {
      if (s.at("name") == name) {
        return s;
      }
    }
    static const nlohmann::json none;
    ADD_FAILURE() << "no step " << name << " in " << doc.dump(2);
    return none;
  }

  /// Every file of the folder that holds `needle`.
  std::vector<std::string> files_holding(const std::string& needle) const {
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(out)) {
      if (entry.is_regular_file() && slurp(entry.path()).find(needle) != std::string::npos) {
        found.push_back(entry.path().string());
      }
    }
    return found;
  }

  std::string token = "tok-" + std::to_string(::getpid()) + "-acceptance";
  std::string password;
  std::string out = files / "acceptance";
};

TEST_F(Acceptance, EveryStepPassesTheVmIsRemovedAndTheFolderHoldsNoSecret) {
  start_acceptance_world("min_speedup: 5");
  const CommandOutput run = acceptance({});
  ASSERT_EQ(run.exit_status, 0) << run.stdout_text << run.stderr_text;
  const auto doc = nlohmann::json::parse(run.stdout_text);
  std::vector<std::string> names;
  for (const auto& s : doc.at("steps")) {
    names.push_back(s.at("name"));
  }
  EXPECT_EQ(
      names,
      (std::vector<std::string>{"preflight", "create", "verify", "bench", "report", "remove"}));
  for (const char* name : {"preflight", "create", "verify", "bench", "report", "remove"}) {
    EXPECT_EQ(step(doc, name).at("status"), "pass") << step(doc, name).dump();
    EXPECT_EQ(step(doc, name).at("exit_status"), 0);
    EXPECT_GT(step(doc, name).at("seconds").get<double>(), 0.0);
  }
  EXPECT_EQ(doc.at("passed"), true);
  EXPECT_EQ(doc.at("vm_kept"), false);
  EXPECT_FALSE(vm_exists());

  // The folder: the summary, the README, and each step's two streams.
  EXPECT_EQ(nlohmann::json::parse(slurp(out + "/acceptance.json")), doc);
  EXPECT_NE(slurp(out + "/README.txt").find("attach this whole folder"), std::string::npos);
  const auto bench = nlohmann::json::parse(slurp(out + "/04-bench.stdout"));
  EXPECT_EQ(bench.at("tests").at(0).at("speedup"), 10.0) << bench.dump();
  EXPECT_NE(step(doc, "bench").at("command").dump().find("\"--min-speedup\",\"5\""),
            std::string::npos);
  for (const char* file : {"01-preflight.stdout",
                           "01-preflight.stderr",
                           "02-create.stdout",
                           "03-verify.stdout",
                           "05-report.stdout",
                           "06-remove.stdout",
                           "report/report.json",
                           "report/speedup.svg"}) {
    EXPECT_TRUE(fs::exists(out + "/" + file)) << file;
  }
  // No secret anywhere, though the recipe's path (which holds both) was printed and recorded.
  EXPECT_EQ(files_holding(password), std::vector<std::string>{});
  EXPECT_EQ(files_holding(token), std::vector<std::string>{});
  EXPECT_NE(slurp(out + "/02-create.stdout").find("recipe-[scrubbed]-[scrubbed]"),
            std::string::npos)
      << slurp(out + "/02-create.stdout");
  EXPECT_EQ(run.stdout_text.find(password), std::string::npos);
}

TEST_F(Acceptance, KeepLeavesTheVmTheTableSaysSoAndASecondRunRefusesIt) {
  start_acceptance_world("min_speedup: 5");
  const CommandOutput run = acceptance({"--keep"}, false);
  ASSERT_EQ(run.exit_status, 0) << run.stdout_text << run.stderr_text;
  EXPECT_TRUE(vm_exists());
  EXPECT_EQ(run.stdout_text.rfind("step       result   seconds  detail\n", 0), 0U)
      << run.stdout_text;
  EXPECT_TRUE(std::regex_search(run.stdout_text, std::regex("\ncreate +pass +[0-9]+\\.[0-9]  \n")))
      << run.stdout_text;
  EXPECT_TRUE(std::regex_search(
      run.stdout_text, std::regex("\nremove +skipped +0\\.0  the VM is kept \\(--keep\\)\n")))
      << run.stdout_text;
  EXPECT_NE(run.stdout_text.find("passed; VM 'accept-vm' kept; everything is in " + out +
                                 " (see README.txt there)\n"),
            std::string::npos)
      << run.stdout_text;

  // The acceptance run deletes its VM, so it will not adopt one that exists.
  out += "-again";
  const CommandOutput again = acceptance({}, false);
  EXPECT_EQ(again.exit_status, 2) << again.stdout_text << again.stderr_text;
  EXPECT_NE(
      again.stderr_text.find("lume-unlock: error: doctor --acceptance: VM 'accept-vm' already "
                             "exists, and the acceptance run deletes the VM it uses"),
      std::string::npos)
      << again.stderr_text;
  EXPECT_TRUE(vm_exists());
}

TEST_F(Acceptance, AFailedBenchGateIsReportedWithItsLogAndTheVmIsStillRemoved) {
  start_acceptance_world("min_speedup: 50");
  const CommandOutput run = acceptance({});
  EXPECT_EQ(run.exit_status, 1) << run.stdout_text << run.stderr_text;
  const auto doc = nlohmann::json::parse(run.stdout_text);
  EXPECT_EQ(doc.at("passed"), false);
  const auto& bench = step(doc, "bench");
  EXPECT_EQ(bench.at("status"), "fail");
  EXPECT_EQ(bench.at("exit_status"), 6);
  EXPECT_NE(bench.at("detail").get<std::string>().find("lume-unlock: bench failed:"),
            std::string::npos)
      << bench.dump();
  EXPECT_NE(
      slurp(out + "/" + bench.at("stderr").get<std::string>()).find("lume-unlock: bench failed: "),
      std::string::npos);
  EXPECT_EQ(step(doc, "report").at("status"), "skipped");
  EXPECT_EQ(step(doc, "report").at("detail"), "an earlier step failed");
  EXPECT_EQ(step(doc, "remove").at("status"), "pass");
  EXPECT_FALSE(vm_exists());
  EXPECT_EQ(files_holding(password), std::vector<std::string>{});
  EXPECT_EQ(files_holding(token), std::vector<std::string>{});
}

TEST_F(Acceptance, WithoutARecipeItSaysWhatToAdd) {
  start_world();
  const CommandOutput run = run_command({LUME_UNLOCK_BINARY,
                                         "--lume-url",
                                         lume->url(),
                                         "--state-dir",
                                         state.path(),
                                         "doctor",
                                         "--acceptance"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.stderr_text,
            "lume-unlock: error: doctor --acceptance: it needs the recipe to create the VM from\n"
            "hint: add --recipe FILE (a Homebrew install has "
            "share/lume-unlock/image-recipes/tahoe-llm.yaml)\n");
  EXPECT_FALSE(fs::exists(out));
}

} // namespace
} // namespace lume_unlock::test

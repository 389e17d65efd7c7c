#include "pipeline/acceptance.hpp"

#include "recipe/recipe.hpp"
#include "util/atomic_file.hpp"
#include "util/child_process.hpp"
#include "util/json_reader.hpp"
#include "util/text_check.hpp"
#include "verify/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <sstream>
#include <variant>

namespace lume_unlock::pipeline {

namespace {

namespace fs = std::filesystem;

/// What a step runs: a command line, or why it is skipped.
using StepCommand = std::variant<std::vector<std::string>, std::string>;

void append(std::vector<std::string>& to, const std::vector<std::string>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

/// `executable GLOBAL… --json COMMAND… FLAGS…`, FLAGS each of `flag_lists` in turn.
std::vector<std::string>
lume_unlock(const AcceptanceOptions& options,
            const std::vector<std::string>& command,
            std::initializer_list<const std::vector<std::string>*> flag_lists = {}) {
  std::vector<std::string> argv = {options.executable};
  append(argv, options.global_args);
  argv.push_back("--json");
  append(argv, command);
  for (const auto* flags : flag_lists) {
    append(argv, *flags);
  }
  return argv;
}

StepCommand preflight_command(const AcceptanceOptions& o, const recipe::Recipe&) {
  return lume_unlock(o, {"doctor", "--recipe", o.recipe}, {&o.bundle_args, &o.registry_args});
}

StepCommand create_command(const AcceptanceOptions& o, const recipe::Recipe&) {
  return lume_unlock(o,
                     {"create", o.vm, "--recipe", o.recipe},
                     {&o.bundle_args, &o.registry_args, &o.connection_args});
}

StepCommand verify_command(const AcceptanceOptions& o, const recipe::Recipe&) {
  return lume_unlock(o, {"verify", o.vm}, {&o.connection_args});
}

/// The recipe's bench: block as `bench` flags, so the gate is the one the recipe states.
StepCommand bench_command(const AcceptanceOptions& o, const recipe::Recipe& recipe) {
  if (!recipe.bench) {
    return std::string("the recipe has no bench: block");
  }
  const recipe::BenchSpec& spec = *recipe.bench;
  std::vector<std::string> command = {"bench",
                                      o.vm,
                                      "--entry",
                                      spec.entry,
                                      "--model",
                                      spec.request.model,
                                      "-p",
                                      std::to_string(spec.request.prompt),
                                      "-n",
                                      std::to_string(spec.request.gen),
                                      "-r",
                                      std::to_string(spec.request.repetitions),
                                      "--perplexity-entry",
                                      spec.perplexity_entry};
  // -t and -ngl too, as create --bench runs them: the published command is the whole command.
  if (spec.request.threads) {
    append(command, {"--threads", std::to_string(*spec.request.threads)});
  }
  if (spec.request.gpu_layers) {
    append(command, {"--n-gpu-layers", std::to_string(*spec.request.gpu_layers)});
  }
  if (spec.max_perplexity_drift) {
    append(command, {"--max-perplexity-drift", verify::compact_number(*spec.max_perplexity_drift)});
  }
  if (spec.thresholds.min_speedup) {
    append(command, {"--min-speedup", verify::compact_number(*spec.thresholds.min_speedup)});
  }
  if (!spec.thresholds.min_host_ratio.empty()) {
    append(command,
           {"--min-host-ratio", verify::format_host_ratio(spec.thresholds.min_host_ratio)});
  }
  if (auto host_json = recipe::bench_host_json_file(recipe); host_json.ok() && host_json.value()) {
    append(command, {"--host-json", *host_json.value()});
  }
  if (auto host = recipe::bench_host_perplexity_file(recipe); host.ok() && host.value()) {
    append(command, {"--host-perplexity", *host.value()});
  }
  return lume_unlock(o, command, {&o.connection_args});
}

StepCommand report_command(const AcceptanceOptions& o, const recipe::Recipe&) {
  return lume_unlock(o, {"report", o.vm, "--out", o.out_dir + "/report"});
}

StepCommand remove_command(const AcceptanceOptions& o, const recipe::Recipe&) {
  if (o.keep) {
    return std::string("the VM is kept (--keep)");
  }
  return lume_unlock(o, {"remove", o.vm, "--delete-vm"}, {&o.connection_args});
}

/// One row of the step table.
struct StepDefinition {
  const char* name;
  /// Runs even after a step failed (cleaning up), unless its command says it is skipped.
  bool cleans_up;
  StepCommand (*command)(const AcceptanceOptions&, const recipe::Recipe&);
};

/// The whole path a first run on a Mac takes, in order: the one table of the steps.
const StepDefinition k_steps[] = {
    {"preflight", false, preflight_command},
    {"create", false, create_command},
    {"verify", false, verify_command},
    {"bench", false, bench_command},
    {"report", false, report_command},
    {"remove", true, remove_command},
};

Status
write_scrubbed(const AcceptanceOptions& options, const std::string& name, const std::string& text) {
  return util::write_file_atomic(options.out_dir + "/" + name,
                                 util::scrub_secrets(text, options.secrets));
}

/// Why a step failed, in one line: its `{"error": …}` document's message (what --json prints on
/// an error), else the doctor checks that failed, else the first line of stderr that says
/// "error" or "failed" (bench's gate), else the exit status.
std::string failure_summary(const util::ChildOutcome& outcome) {
  const util::JsonDocument output{ErrorCategory::failure, "the step's --json output"};
  const auto message =
      util::read_json_text(outcome.stdout_text, output, [](const util::JsonValue& v) {
        return v.object().object("error").string("message");
      });
  if (message.ok() && !message.value().empty()) {
    return message.value();
  }
  const auto failed =
      util::read_json_text(outcome.stdout_text, output, [](const util::JsonValue& v) {
        std::string failed;
        for (const util::JsonValue& item : v.object().array("checks")) {
          const util::JsonObject check = item.object();
          if (check.string("status") == "fail") {
            failed += (failed.empty() ? "" : "; ") + check.string("name") + ": " +
                      check.optional_string("detail").value_or("");
          }
        }
        return failed;
      });
  if (failed.ok() && !failed.value().empty()) {
    return failed.value();
  }
  std::istringstream lines(outcome.stderr_text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("error") != std::string::npos || line.find("failed") != std::string::npos) {
      return line;
    }
  }
  return "exit " + std::to_string(outcome.exit_status);
}

AcceptanceStep run_step(const AcceptanceOptions& options,
                        int index,
                        const StepDefinition& definition,
                        const StepCommand& command,
                        Status& written) {
  AcceptanceStep step;
  step.name = definition.name;
  if (const auto* reason = std::get_if<std::string>(&command)) {
    step.detail = *reason;
    return step;
  }
  const auto& argv = std::get<std::vector<std::string>>(command);
  for (const std::string& arg : argv) {
    step.command.push_back(util::scrub_secrets(arg, options.secrets));
  }
  char prefix[8];
  std::snprintf(prefix, sizeof prefix, "%02d-", index + 1);
  step.stdout_file = prefix + step.name + ".stdout";
  step.stderr_file = prefix + step.name + ".stderr";
  const auto started = std::chrono::steady_clock::now();
  auto outcome = util::run_child(argv);
  step.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!outcome.ok()) {
    step.status = AcceptanceStatus::fail;
    step.detail = util::scrub_secrets(outcome.error().message(), options.secrets);
    step.stdout_file.clear();
    step.stderr_file.clear();
    return step;
  }
  step.exit_status = outcome.value().exit_status;
  step.status = *step.exit_status == 0 ? AcceptanceStatus::pass : AcceptanceStatus::fail;
  if (step.status == AcceptanceStatus::fail) {
    step.detail = util::scrub_secrets(failure_summary(outcome.value()), options.secrets);
  }
  if (written.ok()) {
    written = write_scrubbed(options, step.stdout_file, outcome.value().stdout_text);
  }
  if (written.ok()) {
    written = write_scrubbed(options, step.stderr_file, outcome.value().stderr_text);
  }
  return step;
}

/// Scrubs, in place, files that a step's command wrote itself into the folder (report's
/// `--out DIR/report`): the folder as a whole must hold no secret, not only what is written here.
Status scrub_folder(const AcceptanceOptions& options) {
  if (options.secrets.empty()) {
    return ok_status();
  }
  std::error_code ec;
  for (fs::recursive_directory_iterator it(options.out_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) {
      continue;
    }
    const std::string path = it->path().string();
    LUME_UNLOCK_TRY_ASSIGN(const std::string text, util::read_file(path));
    const std::string scrubbed = util::scrub_secrets(text, options.secrets);
    if (scrubbed != text) {
      LUME_UNLOCK_TRY(util::write_file_atomic(path, scrubbed, 0600));
    }
  }
  return ok_status();
}

std::string readme_text(const AcceptanceReport& report) {
  std::ostringstream text;
  text << "lume-unlock doctor --acceptance: one run of the whole path against the throwaway VM '"
       << report.vm << "'.\n\n"
       << "To report a problem, attach this whole folder (a .tar.gz of it) to the bug report.\n"
       << "acceptance.json lists every step: its command, pass/fail/skipped, seconds and exit\n"
       << "status; NN-step.stdout and NN-step.stderr hold what that step printed (--json output\n"
       << "on stdout). The values of the password and token variables lume-unlock reads were\n"
       << "replaced by " << util::k_scrubbed_marker << " in every file before it was written.\n\n";
  for (const auto& step : report.steps) {
    text << step.name << ": " << acceptance_status_name(step.status);
    if (!step.detail.empty()) {
      text << " (" << step.detail << ")";
    }
    text << "\n";
  }
  text << "\nVM: " << vm_outcome(report) << "\n";
  return text.str();
}

} // namespace

const char* acceptance_status_name(AcceptanceStatus status) {
  static const char* const names[] = {"pass", "fail", "skipped"};
  return names[static_cast<int>(status)];
}

const char* vm_outcome(const AcceptanceReport& report) {
  if (report.vm_kept) {
    return "kept";
  }
  return !report.steps.empty() && report.steps.back().status == AcceptanceStatus::pass
             ? "removed"
             : "never created";
}

bool AcceptanceReport::passed() const {
  return std::none_of(steps.begin(), steps.end(), [](const AcceptanceStep& step) {
    return step.status == AcceptanceStatus::fail;
  });
}

std::vector<std::string> acceptance_secret_variables(const std::string& password_env) {
  std::vector<std::string> names = {"LUME_UNLOCK_GUEST_PASSWORD",
                                    "GHCR_TOKEN",
                                    "GITHUB_TOKEN",
                                    "GHCR_USERNAME",
                                    "GITHUB_USERNAME",
                                    "LUME_UNLOCK_KEY_PASSPHRASE"};
  if (!password_env.empty() && password_env != names.front()) {
    names.insert(names.begin() + 1, password_env);
  }
  return names;
}

std::vector<std::string> acceptance_secrets(const std::string& password_env) {
  std::vector<std::string> values;
  for (const std::string& name : acceptance_secret_variables(password_env)) {
    if (const char* value = std::getenv(name.c_str()); value != nullptr && *value != '\0') {
      values.emplace_back(value);
    }
  }
  return values;
}

Result<AcceptanceReport> run_acceptance(const AcceptanceOptions& options,
                                        const std::function<void(const std::string&)>& on_step) {
  LUME_UNLOCK_TRY_ASSIGN(const recipe::Recipe recipe, recipe::load_recipe(options.recipe));
  std::error_code ec;
  if (fs::exists(options.out_dir + "/acceptance.json", ec)) {
    return Error(ErrorCategory::usage,
                 "acceptance folder '" + options.out_dir + "'",
                 "it already holds an acceptance run (acceptance.json)",
                 "name a new folder with --out DIR");
  }
  fs::create_directories(options.out_dir, ec);
  if (ec) {
    return Error(ErrorCategory::failure,
                 "cannot create the acceptance folder '" + options.out_dir + "'",
                 ec.message(),
                 "name a writable folder with --out DIR");
  }
  AcceptanceReport report;
  report.vm = options.vm;
  report.out_dir = options.out_dir;
  Status written = ok_status();
  bool failed = false;
  bool create_tried = false;
  int index = 0;
  for (const StepDefinition& definition : k_steps) {
    AcceptanceStep step;
    if (failed && !definition.cleans_up) {
      step.name = definition.name;
      step.detail = "an earlier step failed";
    } else if (definition.cleans_up && !create_tried) {
      step.name = definition.name;
      step.detail = "no VM was created";
    } else {
      const StepCommand command = definition.command(options, recipe);
      if (std::holds_alternative<std::vector<std::string>>(command)) {
        on_step(definition.name);
      }
      step = run_step(options, index, definition, command, written);
    }
    create_tried = create_tried || (step.name == "create" && step.exit_status.has_value());
    failed = failed || step.status == AcceptanceStatus::fail;
    report.steps.push_back(std::move(step));
    ++index;
  }
  const AcceptanceStep& remove = report.steps.back();
  report.vm_kept = create_tried && remove.status != AcceptanceStatus::pass;
  LUME_UNLOCK_TRY(std::move(written));
  LUME_UNLOCK_TRY(scrub_folder(options));
  LUME_UNLOCK_TRY(write_scrubbed(options, "acceptance.json", to_json(report).dump(2) + "\n"));
  LUME_UNLOCK_TRY(write_scrubbed(options, "README.txt", readme_text(report)));
  return report;
}

nlohmann::json to_json(const AcceptanceReport& report) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& step : report.steps) {
    nlohmann::json item = {{"name", step.name},
                           {"status", acceptance_status_name(step.status)},
                           {"seconds", step.seconds}};
    if (!step.detail.empty()) {
      item["detail"] = step.detail;
    }
    if (step.exit_status) {
      item["exit_status"] = *step.exit_status;
    }
    if (!step.command.empty()) {
      item["command"] = step.command;
    }
    if (!step.stdout_file.empty()) {
      item["stdout"] = step.stdout_file;
      item["stderr"] = step.stderr_file;
    }
    steps.push_back(item);
  }
  return {{"vm", report.vm},
          {"out", report.out_dir},
          {"passed", report.passed()},
          {"vm_kept", report.vm_kept},
          {"vm_outcome", vm_outcome(report)},
          {"steps", steps}};
}

} // namespace lume_unlock::pipeline

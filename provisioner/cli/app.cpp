#include "cli/app.hpp"

#include "bundle/bundle.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/version.hpp"
#include "transfer/shim_bundle.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace lume_unlock::cli {

namespace {

const char* const k_description =
    "Provision macOS VMs under Lume with the process-scoped Metal capability shim, so local "
    "LLMs run on the guest GPU.";

/// "sha256:<hex>" of the bundle.json of the bundle at `path`, after verifying its files.
Result<std::string> bundle_digest(const std::string& path) {
  LUME_UNLOCK_TRY_ASSIGN(auto loaded,
                         util::ends_with(path, ".tar.gz") ? bundle::load_bundle_archive(path)
                                                          : bundle::load_bundle_directory(path));
  LUME_UNLOCK_TRY_ASSIGN(auto hex, util::sha256_file_hex(loaded.root() + "/bundle.json"));
  return "sha256:" + hex;
}

/// What --version prints: the version and source revision, then the shim bundle this binary
/// would use without --bundle or a recipe and the SHA-256 of its bundle.json, which names every
/// file's SHA-256 and so pins the whole bundle (directory or archive alike). A bundle that
/// cannot be read is said so on that line; this never fails.
std::string version_text() {
  std::string text =
      std::string("lume-unlock ") + k_version + " (source " + k_source_revision + ")";
  const transfer::BundleLocation location = transfer::locate_bundle(std::nullopt, std::nullopt);
  text += "\nshim bundle " + location.path + " (" + location.source + "): ";
  if (transfer::location_kind(location.path) == transfer::LocationKind::reference) {
    return text + "a registry reference, not fetched here";
  }
  auto digest = bundle_digest(location.path);
  return text +
         (digest ? "bundle.json " + digest.value() : "unreadable: " + digest.error().message());
}

std::string env_or(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

std::string default_state_dir() {
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.lume-unlock";
}

void add_global_options(CLI::App& app, GlobalOptions& global, bool& quiet, bool& verbose) {
  global.lume_url = env_or("LUME_API_URL", "http://127.0.0.1:7777");
  global.state_dir = env_or("LUME_UNLOCK_STATE_DIR", default_state_dir());
  app.add_option("--lume-url", global.lume_url, "Lume API base URL (env LUME_API_URL)")
      ->capture_default_str();
  app.add_option("--state-dir",
                 global.state_dir,
                 "Where lume-unlock keeps keys, pins and records (env LUME_UNLOCK_STATE_DIR)")
      ->capture_default_str();
  app.add_option_function<double>(
         "--lock-timeout",
         [&global](double seconds) {
           global.lock_timeout = std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
         },
         "Seconds a command that changes a VM waits while another run changes it (default 60)")
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--mirror",
                 global.mirrors,
                 "FROM=TO: fetch install: artifacts whose URL starts with FROM from TO instead, "
                 "same bytes verified (repeatable; env LUME_UNLOCK_MIRROR, HF_ENDPOINT)")
      ->type_size(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--json", global.json, "Print machine-readable JSON on stdout");
  auto* quiet_flag = app.add_flag("-q,--quiet", quiet, "Print only results and errors");
  app.add_flag("-v,--verbose", verbose, "Print debug details (requests, commands, counts)")
      ->excludes(quiet_flag);
}

/// The first word of argv that is not a global option of `app` or its value: the command the
/// user meant.
std::optional<std::string> command_word(int argc, const char* const* argv, const CLI::App& app) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      return std::nullopt;
    }
    if (arg.empty() || arg[0] != '-') {
      return arg;
    }
    const CLI::Option* option = app.get_option_no_throw(arg);
    i += option != nullptr && option->get_expected_min() > 0 ? 1 : 0;
  }
  return std::nullopt;
}

Error unknown_command(const std::string& word, const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  std::string hint = "run 'lume-unlock --help' for the list of commands";
  if (auto match = util::closest_match(word, names)) {
    hint = "did you mean 'lume-unlock " + *match + "'? (" + hint + ")";
  }
  return Error(ErrorCategory::usage, "unknown command '" + word + "'", "", hint);
}

} // namespace

int run_cli(int argc,
            const char* const* argv,
            std::ostream& out,
            std::ostream& err,
            bool out_is_terminal,
            bool err_is_terminal) {
  Context context(out, err, out_is_terminal, err_is_terminal);
  CLI::App app(k_description, "lume-unlock");
  // A callback: the bundle digest is read only when --version is asked for.
  app.set_version_flag("--version", version_text);
  app.require_subcommand(1);
  app.fallthrough(); // global options may also follow the command name
  bool quiet = false;
  bool verbose = false;
  add_global_options(app, context.global, quiet, verbose);
  register_commands(app, context);
  // Lets commands see --json/--quiet/--verbose before their callbacks run.
  app.parse_complete_callback([&] {
    context.global.verbosity =
        quiet ? Verbosity::quiet : (verbose ? Verbosity::verbose : Verbosity::normal);
  });

  if (auto word = command_word(argc, argv, app)) {
    if (app.get_subcommands([&](const CLI::App* sub) { return sub->check_name(*word); }).empty()) {
      // --json may appear anywhere; honour it for this early error too.
      for (int i = 1; i < argc; ++i) {
        context.global.json = context.global.json || std::string(argv[i]) == "--json";
      }
      return context.report(unknown_command(*word, app));
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion&) {
    out << app.version() << '\n';
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string hint = "run 'lume-unlock --help'";
    for (const auto* sub : app.get_subcommands()) {
      hint = "run 'lume-unlock " + sub->get_name() + " --help'";
    }
    return context.report(Error(ErrorCategory::usage, "bad usage", e.what(), hint));
  } catch (const Error& e) {
    return context.report(e);
  } catch (const std::exception& e) {
    return context.report(Error(ErrorCategory::failure,
                                "internal error",
                                e.what(),
                                "please report this with the command you ran"));
  }
  return context.exit_status;
}

} // namespace lume_unlock::cli

#include "pipeline/allow.hpp"

#include "cli/allow_list.hpp"
#include "cli/commands.hpp"
#include "cli/plan_runner.hpp"
#include "enablement/enablement_list.hpp"
#include "guest/guest_layout.hpp"
#include "util/text_check.hpp"

#include <memory>
#include <string>
#include <vector>

namespace lume_unlock::cli {

namespace {

struct AllowOptions {
  std::string vm;
  std::string entry;
  std::string program;
  std::vector<std::string> args;
  std::vector<std::string> env;
  bool no_agent = false;
  bool no_keep_alive = false;
  bool dry_run = false;
  guest::ConnectionOptions connection;
};

std::map<std::string, std::string> parse_env(const std::vector<std::string>& pairs) {
  std::map<std::string, std::string> env;
  for (const std::string& pair : pairs) {
    const auto equals = pair.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw Error(ErrorCategory::usage,
                  "--env " + util::quote_for_message(pair),
                  "expected KEY=VALUE",
                  "e.g. --env GGML_METAL_NO_RESIDENCY=1");
    }
    env[pair.substr(0, equals)] = pair.substr(equals + 1);
  }
  return env;
}

/// A dry run's changes as a plan: one step per change (its verb the id), or one step in place.
pipeline::Plan
plan_of(const std::string& verb, const AllowOptions& options, const apply::ApplyReport& report) {
  pipeline::Plan plan("allow " + verb);
  for (const std::string& change : report.changes) {
    const auto space = change.find(' ');
    plan.add(pipeline::Step::to_do(change.substr(0, space), change.substr(space + 1), {}));
  }
  if (report.changes.empty()) {
    plan.add(pipeline::Step::observed_as("enablement",
                                         "apply the enablement list",
                                         true,
                                         "the enablement list of VM '" + options.vm +
                                             "' is already applied",
                                         {}));
  }
  return plan;
}

/// Prints what `allow add` or `allow remove` changed or, with --dry-run, the plan of it.
void render_apply(const AllowOptions& options,
                  const std::string& verb,
                  const guest::GuestSession& session,
                  const apply::ApplyReport& report,
                  Context& context) {
  context.debug_counts(session.command_count());
  const nlohmann::json fields = {{"entry", options.entry},
                                 {"changes", report.changes},
                                 {"programs", program_checks_json(report.checks)},
                                 {"commands", report.commands}};
  if (!context.json()) {
    print_program_checks(context.out, report.checks);
  }
  if (options.dry_run) {
    print_dry_run(context,
                  plan_of(verb, options, report),
                  options.vm,
                  "allow " + verb + " '" + options.entry + "' in VM '" + options.vm + "'",
                  fields);
  } else if (context.json()) {
    nlohmann::json doc = fields;
    doc.update(
        {{"vm", options.vm}, {"action", verb}, {"dry_run", false}, {"changed", report.changed}});
    context.print_json(doc);
  } else if (!report.changed) {
    context.out << "nothing to change: the enablement list of VM '" << options.vm
                << "' is already applied\n";
  } else {
    for (const std::string& change : report.changes) {
      context.out << change << '\n';
    }
  }
}

void run_add(const AllowOptions& options, Context& context) {
  enablement::EnablementEntry entry;
  entry.name = options.entry;
  entry.program = options.program;
  entry.args = options.args;
  entry.env = parse_env(options.env);
  entry.agent = !options.no_agent;
  entry.keep_alive = entry.agent && !options.no_keep_alive;
  enablement::validate(entry).value_or_throw();
  const auto lock = context.lock_vm(options.vm, "allow add", options.dry_run);
  auto session = context.open_guest(options.vm, options.connection);
  const auto report =
      pipeline::allow_add(*session, context.global.state_dir, options.vm, entry, options.dry_run)
          .value_or_throw();
  render_apply(options, "add", *session, report, context);
}

void run_remove(const AllowOptions& options, Context& context) {
  const auto lock = context.lock_vm(options.vm, "allow remove", options.dry_run);
  auto session = context.open_guest(options.vm, options.connection);
  const auto report =
      pipeline::allow_remove(
          *session, context.global.state_dir, options.vm, options.entry, options.dry_run)
          .value_or_throw();
  render_apply(options, "remove", *session, report, context);
}

} // namespace

void register_allow(CLI::App& app, Context& context) {
  auto* allow = app.add_subcommand("allow", "Show or edit which programs the shim may enable");
  allow->require_subcommand(1);
  allow->footer(
      "The enablement list lives in the guest (~/Library/Application Support/LumeUnlock/\n"
      "enablement.json). add and remove edit it and re-apply it: agents are written, linted and\n"
      "(re)loaded, removed ones booted out and deleted, the guard file rewritten; a failure\n"
      "midway puts the previous state back. The shim must be installed ('lume-unlock create').");

  // Each subcommand runs with its own options.
  const auto run = [&context](auto command, std::shared_ptr<AllowOptions> options) {
    return [command, options, &context] { command(*options, context); };
  };

  auto list_options = std::make_shared<AllowOptions>();
  auto* list = allow->add_subcommand("list", "Show the enabled programs");
  list->add_option("name", list_options->vm, "The Lume VM")->required();
  add_connection_options(*list, list_options->connection);
  list->callback([list_options, &context] {
    run_allow_list(list_options->vm, list_options->connection, context);
  });

  auto add_options = std::make_shared<AllowOptions>();
  auto* add = allow->add_subcommand("add", "Enable a program (or update its entry)");
  add->add_option("name", add_options->vm, "The Lume VM")->required();
  add->add_option("entry",
                  add_options->entry,
                  "Entry name, [a-z0-9][a-z0-9-]{0,62}; the agent is dev.lume-unlock.<entry>")
      ->required();
  add->add_option("--program", add_options->program, "Absolute path of the program in the guest")
      ->required();
  add->add_option("--arg",
                  add_options->args,
                  "One argument (repeat for more), passed verbatim; write --arg=--flag for values "
                  "that start with -")
      ->allow_extra_args(false);
  add->add_option("--env", add_options->env, "Extra environment KEY=VALUE (repeatable)")
      ->allow_extra_args(false);
  add->add_flag("--no-agent",
                add_options->no_agent,
                "Only list it in the guard file; run it with 'lume-unlock exec'");
  add->add_flag("--no-keep-alive",
                add_options->no_keep_alive,
                "Do not let launchd restart the agent when it exits");
  add->add_flag("--dry-run",
                add_options->dry_run,
                "Check the program and print what would change, without changing anything");
  add_connection_options(*add, add_options->connection);
  add->callback(run(run_add, add_options));

  auto remove_options = std::make_shared<AllowOptions>();
  auto* remove =
      allow->add_subcommand("remove", "Disable a program: boot out and delete its agent");
  remove->add_option("name", remove_options->vm, "The Lume VM")->required();
  remove->add_option("entry", remove_options->entry, "Entry name")->required();
  remove->add_flag(
      "--dry-run", remove_options->dry_run, "Print what would change, without changing anything");
  add_connection_options(*remove, remove_options->connection);
  remove->callback(run(run_remove, remove_options));
}

} // namespace lume_unlock::cli

#include "pipeline/remove.hpp"

#include "cli/commands.hpp"
#include "cli/plan_runner.hpp"
#include "cli/progress_renderer.hpp"
#include "lume/types.hpp"

#include <memory>

namespace lume_unlock::cli {

namespace {

struct RemoveCommandOptions {
  std::string vm;
  bool delete_vm = false;
  bool dry_run = false;
  guest::ConnectionOptions connection;
};

void run_remove(const RemoveCommandOptions& options, Context& context) {
  const auto lock = context.lock_vm(options.vm, "remove", options.dry_run);
  pipeline::RemoveOptions remove{lume::VmName::parse(options.vm).value_or_throw(),
                                 context.global.state_dir,
                                 options.delete_vm};
  pipeline::RemoveServices services{context.lume(), [&]() -> std::unique_ptr<guest::GuestSession> {
                                      return context.open_guest(options.vm, options.connection);
                                    }};
  pipeline::RemovePipeline pipeline(remove, services);
  pipeline::Plan plan = pipeline.plan();
  if (options.dry_run) {
    print_dry_run(context, plan, options.vm, "remove '" + options.vm + "'");
    return;
  }
  ProgressRenderer renderer(context);
  const auto reports =
      apply_plan(context, plan, renderer.callback(), "lume-unlock remove " + options.vm, [&] {
        return pipeline.outcome().ssh_commands;
      });
  if (!context.json()) {
    context.out << pipeline::reports_to_text("remove '" + options.vm + "'", reports);
    return;
  }
  nlohmann::json doc = with_reports(
      {{"vm", options.vm}, {"removed_agents", pipeline.outcome().removed_agents}}, reports);
  if (pipeline.outcome().removal_record) {
    doc["removal_record"] = *pipeline.outcome().removal_record;
  }
  context.print_json(doc);
}

} // namespace

void register_remove(CLI::App& app, Context& context) {
  auto options = std::make_shared<RemoveCommandOptions>();
  auto* command =
      app.add_subcommand("remove", "Take lume-unlock out of a VM's guest (and optionally the VM)");
  command->footer("Boots out and deletes the dev.lume-unlock.* agents, deletes the guard file,\n"
                  "enablement.json, the shim, the probe, the guest's record and our logs, and\n"
                  "keeps the host record as removed-<time>.json. The VM must be running unless\n"
                  "--delete-vm is given (then the guest is not touched: the VM is deleted).");
  command->add_option("name", options->vm, "The Lume VM")->required();
  command->add_flag("--delete-vm", options->delete_vm, "Also delete the VM through Lume");
  command->add_flag("--dry-run", options->dry_run, "Print the plan; change nothing");
  add_connection_options(*command, options->connection);
  command->callback([options, &context] { run_remove(*options, context); });
}

} // namespace lume_unlock::cli

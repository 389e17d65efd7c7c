#include "cli/remove.hpp"

#include "cli/connection_flags.hpp"
#include "cli/progress_renderer.hpp"
#include "cli/vm_guest.hpp"
#include "lume/client.hpp"
#include "lume/types.hpp"
#include "pipeline/remove.hpp"

#include <iomanip>
#include <memory>

namespace lume_unlock::cli {

namespace {

struct RemoveCommandOptions {
  std::string vm;
  bool delete_vm = false;
  bool dry_run = false;
  guest::ConnectionOptions connection;
};

void run_remove(const RemoveCommandOptions& options, Context& context, int& exit_code) {
  const auto lock = context.lock_vm(options.vm, "remove", options.dry_run);
  lume::ClientOptions lume_options;
  lume_options.base_url = context.global.lume_url;
  lume::LumeClient lume_client(lume_options);
  pipeline::RemoveOptions remove{lume::VmName::parse(options.vm).value_or_throw(),
                                 context.global.state_dir,
                                 options.delete_vm};
  pipeline::RemoveServices services{lume_client, [&]() -> std::unique_ptr<guest::GuestSession> {
                                      return connect_vm_guest(
                                          context, options.vm, options.connection, lume_client);
                                    }};
  pipeline::RemovePipeline pipeline(remove, services);
  pipeline::Plan plan = pipeline.plan();
  if (options.dry_run) {
    if (context.json()) {
      nlohmann::json doc = plan.to_json();
      doc["vm"] = options.vm;
      doc["dry_run"] = true;
      context.print_json(doc);
    } else {
      context.out << "remove '" << options.vm << "' would run (dry run, nothing changed):\n"
                  << plan.to_text();
    }
    exit_code = 0;
    return;
  }
  ProgressRenderer renderer(context);
  std::vector<pipeline::StepReport> reports;
  plan.apply(renderer.callback(), "lume-unlock remove " + options.vm, reports);
  context.debug("SSH commands: " + std::to_string(pipeline.outcome().ssh_commands) +
                ", Lume requests: " + std::to_string(lume_client.request_count()));
  if (context.json()) {
    nlohmann::json doc = pipeline::reports_to_json(reports);
    doc["vm"] = options.vm;
    doc["removed_agents"] = pipeline.outcome().removed_agents;
    if (pipeline.outcome().removal_record) {
      doc["removal_record"] = *pipeline.outcome().removal_record;
    }
    context.print_json(doc);
  } else {
    context.out << "remove '" << options.vm << "':\n";
    for (const auto& r : reports) {
      context.out << "  " << std::left << std::setw(10) << pipeline::outcome_name(r.outcome)
                  << std::right << r.id << ": " << r.summary << "\n";
    }
  }
  exit_code = 0;
}

} // namespace

void register_remove(CLI::App& app, Context& context, int& exit_code) {
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
  command->callback([options, &context, &exit_code] { run_remove(*options, context, exit_code); });
}

} // namespace lume_unlock::cli

#include "pipeline/status.hpp"

#include "cli/commands.hpp"
#include "lume/types.hpp"
#include "pipeline/bench.hpp"
#include "pipeline/vm_state.hpp"
#include "provenance/provenance.hpp"

#include <memory>
#include <optional>
#include <variant>

namespace lume_unlock::cli {

namespace {

struct StatusOptions {
  std::string vm;
  guest::ConnectionOptions connection;
};

/// Lume's VNC server for the VM, in words and as JSON ({"listening", "address"}; null when Lume
/// did not describe it): headless runs ask for none, Lume 0.5.3 listens anyway (#3878).
struct VncState {
  std::string text = "unknown (Lume did not describe the VM)";
  nlohmann::json json;
};

VncState vnc_state(Context& context, const std::string& vm) {
  VncState vnc;
  auto state = context.lume().get(vm);
  const auto* details = state.ok() ? std::get_if<lume::VmDetails>(&state.value()) : nullptr;
  if (details != nullptr) {
    const std::optional<std::string> listener = pipeline::vnc_listener(*details);
    vnc.text = listener ? "Lume's VNC server listens at " + *listener : "no VNC listener";
    vnc.json = {{"listening", listener.has_value()},
                {"address", listener ? nlohmann::json(*listener) : nlohmann::json()}};
  }
  return vnc;
}

int run_status(const StatusOptions& options, Context& context) {
  // The name and the state directory first: neither is "no record" (issue 27).
  lume::VmName::parse(options.vm).value_or_throw();
  pipeline::check_state_dir_readable(context.global.state_dir).value_or_throw();
  auto record = provenance::read_provenance(context.global.state_dir, options.vm);
  if (!record.ok()) {
    throw Error(ErrorCategory::usage,
                "status of VM '" + options.vm + "'",
                "lume-unlock has no record of it (" + record.error().why() + ")",
                "provision it with 'lume-unlock create " + options.vm + " --recipe FILE'");
  }
  auto session = context.open_guest(options.vm, options.connection);
  const pipeline::StatusReport report =
      pipeline::check_status(*session, record.value()).value_or_throw();
  context.debug_counts(session->command_count());
  const auto drifted = report.drifted();
  const VncState vnc = vnc_state(context, options.vm);
  if (context.json()) {
    nlohmann::json doc = pipeline::to_json(report);
    doc["vm"] = options.vm;
    // The record the guest was compared with, so one call gives both (the Ansible info module).
    doc["record"] = provenance::to_json(record.value());
    doc["vnc"] = vnc.json;
    if (record.value().bench) {
      doc["bench"] = *record.value().bench;
    }
    context.print_json(doc);
  } else {
    context.out << "status of '" << options.vm << "': "
                << (drifted.empty() ? "everything matches the record"
                                    : std::to_string(drifted.size()) + " item(s) drifted")
                << "\n";
    for (const auto& item : report.items) {
      context.out << "  " << (item.ok() ? "ok     " : "DRIFT  ") << item.item;
      if (!item.ok()) {
        context.out << ": expected " << item.expected << ", found " << item.found;
        if (!item.fix.empty()) {
          context.out << "\n           " << item.fix;
        }
      }
      context.out << "\n";
    }
    context.out << "  vnc    " << vnc.text << "\n";
    if (record.value().bench) {
      const std::string summary = pipeline::bench_summary(*record.value().bench);
      context.out << "  last bench: " << (summary.empty() ? "(unreadable record)" : summary)
                  << "\n";
    }
  }
  if (!drifted.empty()) {
    // A drift with its own fix (a program whose link moved) names it; the rest is restored by
    // create.
    std::string restore =
        "restore it with 'lume-unlock create " + options.vm + " --recipe " +
        (record.value().recipe && record.value().recipe->path ? *record.value().recipe->path
                                                              : std::string("FILE")) +
        "'";
    if (!drifted.front().fix.empty()) {
      restore = drifted.front().fix;
    }
    context.warn("drift in VM '" + options.vm + "': " + drifted.front().item +
                 (drifted.size() > 1 ? " and " + std::to_string(drifted.size() - 1) + " more"
                                     : std::string()) +
                 "; " + restore);
    return exit_code(ErrorCategory::verification);
  }
  return 0;
}

} // namespace

void register_status(CLI::App& app, Context& context) {
  auto options = std::make_shared<StatusOptions>();
  auto* command = app.add_subcommand(
      "status", "Compare a VM's guest with lume-unlock's record of it (exit 6 on drift)");
  command->add_option("name", options->vm, "The Lume VM")->required();
  add_connection_options(*command, options->connection);
  command->callback([options, &context] { context.exit_status = run_status(*options, context); });
}

} // namespace lume_unlock::cli

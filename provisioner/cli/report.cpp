#include "pipeline/report.hpp"

#include "cli/commands.hpp"
#include "cli/version.hpp"
#include "util/text.hpp"

#include <memory>

namespace lume_unlock::cli {

namespace {

struct ReportCommandOptions {
  std::string vm;
  std::string out;
  std::string check;
  std::string label;
  bool dry_run = false;
  guest::ConnectionOptions connection;
};

pipeline::ReportOptions report_options(const ReportCommandOptions& options,
                                       const Context& context) {
  pipeline::ReportOptions report;
  report.vm = options.vm;
  report.state_dir = context.global.state_dir;
  report.tool_version = k_version;
  if (!options.label.empty()) {
    report.label = options.label;
  }
  return report;
}

void run_write(const ReportCommandOptions& options, Context& context) {
  const pipeline::ReportOptions report = report_options(options, context);
  const std::string dir =
      options.out.empty() ? pipeline::default_report_dir(options.vm) : options.out;
  if (options.dry_run) {
    const auto sources = pipeline::report_sources(report).value_or_throw();
    if (context.json()) {
      context.print_json({{"vm", options.vm}, {"dry_run", true}, {"out", dir}, {"reads", sources}});
    } else {
      context.out << "report '" << options.vm << "' would read (dry run, nothing written):\n";
      for (const auto& source : sources) {
        context.out << "  " << source << "\n";
      }
      context.out << "and write " << dir << "/\n";
    }
    return;
  }
  const pipeline::ReportFolder folder =
      pipeline::write_vm_report(report, context.lume(), dir).value_or_throw();
  if (context.json()) {
    context.print_json(folder.report);
    context.note("report of VM '" + options.vm + "' written to " + dir + "/");
  } else {
    context.out << "report of VM '" << options.vm << "' written to " << dir << "/\n"
                << "  report.md, report.json, speedup.svg and " << folder.raw.size()
                << " raw input(s)\n";
    for (const auto& note : folder.report["notes"]) {
      context.out << "  note: " << note.get<std::string>() << "\n";
    }
  }
}

int run_check(const ReportCommandOptions& options, Context& context) {
  const nlohmann::json report = pipeline::read_report(options.check).value_or_throw();
  auto session = context.open_guest(options.vm, options.connection);
  const auto items = pipeline::check_report(*session, report, context.global.state_dir, options.vm)
                         .value_or_throw();
  std::vector<const report::CheckItem*> differ;
  for (const auto& item : items) {
    if (!item.ok()) {
      differ.push_back(&item);
    }
  }
  if (context.json()) {
    nlohmann::json listed = nlohmann::json::array();
    for (const auto& item : items) {
      listed.push_back({{"item", item.item},
                        {"expected", item.expected},
                        {"found", item.found},
                        {"ok", item.ok()}});
    }
    context.print_json(
        {{"vm", options.vm}, {"report", options.check}, {"ok", differ.empty()}, {"items", listed}});
  } else {
    context.out << "report " << options.check << " against VM '" << options.vm << "': "
                << (differ.empty() ? "everything matches"
                                   : std::to_string(differ.size()) + " difference(s)")
                << "\n";
    for (const auto& item : items) {
      context.out << "  " << (item.ok() ? "ok      " : "DIFFERS ") << item.item;
      if (!item.ok()) {
        context.out << ": report " << item.expected << ", VM " << item.found;
      }
      context.out << "\n";
    }
  }
  if (!differ.empty()) {
    const std::string names = util::join(differ, ", ", [](const auto* item) { return item->item; });
    context.warn("VM '" + options.vm + "' differs from the report " + options.check + ": " + names);
    return exit_code(ErrorCategory::verification);
  }
  return 0;
}

} // namespace

void register_report(CLI::App& app, Context& context) {
  auto options = std::make_shared<ReportCommandOptions>();
  auto* command = app.add_subcommand(
      "report",
      "Write a VM's evidence (report.json, report.md, speedup.svg, raw inputs) to a folder, or "
      "check one against the VM (exit 6 on a difference)");
  command->add_option("name", options->vm, "The Lume VM")->required();
  auto* out = command->add_option(
      "--out", options->out, "The report folder (default ./lume-unlock-report-NAME)");
  auto* check = command->add_option(
      "--check", options->check, "Compare the report in this folder with the VM instead");
  command->add_option(
      "--label", options->label, "What the run was, shown in report.md and the chart's title");
  command->add_flag(
      "--dry-run", options->dry_run, "List what the report would read; write nothing");
  out->excludes(check);
  add_connection_options(*command, options->connection);
  command->callback([options, &context] {
    if (options->check.empty()) {
      run_write(*options, context);
    } else {
      context.exit_status = run_check(*options, context);
    }
  });
}

} // namespace lume_unlock::cli

#include "cli/allow_list.hpp"

#include "enablement/enablement_list.hpp"
#include "guest/guest_layout.hpp"
#include "pipeline/allow.hpp"
#include "util/text_check.hpp"

namespace lume_unlock::cli {

void run_allow_list(const std::string& vm,
                    const guest::ConnectionOptions& connection,
                    Context& context) {
  auto session = context.open_guest(vm, connection);
  const auto listed = pipeline::allow_list(*session, context.global.state_dir, vm).value_or_throw();
  const apply::GuestEnablementView& view = listed.view;
  const auto& loaded = view.observed.state.loaded_labels;
  if (context.json()) {
    nlohmann::json document = enablement::enablement_to_json(view.list);
    document["vm"] = vm;
    for (auto& item : document["enablement"]) {
      item["origin"] = listed.origin_of(item["name"].get<std::string>());
      if (!item.contains("resolved_program")) {
        item["resolved_program"] = nullptr; // applied before programs were resolved
      }
    }
    document["shim"] = {{"platform", view.target.shim.platform},
                        {"path", view.target.shim.shim.path}};
    if (loaded) {
      document["loaded_agents"] = *loaded;
    }
    context.print_json(document);
    return;
  }
  if (view.list.entries.empty()) {
    context.out << "no programs are enabled in VM '" << vm
                << "' (add one with 'lume-unlock allow add " << vm << " ENTRY --program PATH')\n";
    return;
  }
  for (const enablement::EnablementEntry& entry : view.list.entries) {
    std::string state = "exec only";
    if (entry.agent) {
      const bool is_loaded = !loaded || loaded->count(guest::agent_label(entry.name)) != 0;
      state = std::string("agent") + (entry.keep_alive ? ", keep-alive" : "") +
              (is_loaded ? ", loaded" : ", not loaded");
    }
    context.out << entry.name << "  " << entry.program;
    for (const std::string& arg : entry.args) {
      context.out << ' ' << util::quote_for_message(arg);
    }
    context.out << "  (" << state << "; from " << listed.origin_of(entry.name) << ")\n";
    // The path the guard file lists: the shim compares it with the running executable's realpath.
    context.out << "    real path: "
                << (entry.resolved_program
                        ? *entry.resolved_program
                        : std::string("not resolved (applied before lume-unlock resolved links; "
                                      "the guard file lists the program as written)"))
                << "\n";
  }
}

} // namespace lume_unlock::cli

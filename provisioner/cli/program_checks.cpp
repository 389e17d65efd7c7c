#include "cli/program_checks.hpp"

namespace lume_unlock::cli {

nlohmann::json program_checks_json(const std::vector<apply::ProgramCheck>& checks) {
  nlohmann::json list = nlohmann::json::array();
  for (const apply::ProgramCheck& check : checks) {
    list.push_back({{"entry", check.entry},
                    {"program", check.program},
                    {"verdict", macho::verdict_name(check.verdict.kind)},
                    {"archs", check.verdict.archs},
                    {"slice", check.verdict.slice},
                    {"why", check.verdict.why}});
  }
  return list;
}

void print_program_checks(std::ostream& out, const std::vector<apply::ProgramCheck>& checks) {
  for (const apply::ProgramCheck& check : checks) {
    out << "checked: " << apply::describe_check(check) << '\n';
  }
}

} // namespace lume_unlock::cli

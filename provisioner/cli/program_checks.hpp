#pragma once

#include "apply/programs.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <vector>

namespace lume_unlock::cli {

/// {"entry", "program", "verdict", "archs", "slice", "why"} of one program check (--json of
/// `allow add` and `create`).
nlohmann::json program_checks_json(const std::vector<apply::ProgramCheck>& checks);

/// One line per check: "checked: program '/p': injectable (its arm64 slice …)".
void print_program_checks(std::ostream& out, const std::vector<apply::ProgramCheck>& checks);

} // namespace lume_unlock::cli

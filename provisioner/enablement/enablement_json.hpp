#pragma once

#include "enablement/enablement_list.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace lume_unlock::enablement {

/// Schema tag of enablement.json.
constexpr const char* k_enablement_schema = "lume-unlock/enablement/v1";

/// {"schema":"lume-unlock/enablement/v1","enablement":[{"name","program","args","agent",
/// "keep_alive","env",("profile"),("resolved_program")}…]} — the fields of DESIGN §6, "profile"
/// only when set, and "resolved_program" (the program's real path, found at apply time) only when
/// resolved; lists written without it stay readable.
nlohmann::json enablement_to_json(const EnablementList& list);

/// The bytes of enablement.json: enablement_to_json indented by 2, keys sorted, UTF-8, a final
/// newline. The same list always gives the same bytes.
std::string render_enablement_json(const EnablementList& list);

/// Reads enablement.json (strict: unknown keys and a different schema are errors) and validates
/// the list. Errors (category usage) read "<source>: /enablement/2/args/0: expected a string, got
/// an integer" for shape problems (util/json_reader) and "<source>: enablement entry 'x': <reason>"
/// for rule violations.
Result<EnablementList> parse_enablement_json(std::string_view text, const std::string& source_name);

} // namespace lume_unlock::enablement

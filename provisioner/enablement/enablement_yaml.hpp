#pragma once

#include "enablement/enablement_list.hpp"
#include "util/result.hpp"

#include <string>
#include <string_view>

namespace YAML {
class Node;
}

namespace lume_unlock::enablement {

/// Reads the value of a recipe's `enablement:` key (a sequence of entries; null = empty list)
/// and validates it. `source_name` names the file in errors, which read
/// "<source>:<line>:<column>: enablement entry '<name>': <reason>" with the position of the
/// offending node (1-based). Unknown keys are errors with a "did you mean" hint. Defaults:
/// args [], agent true, keep_alive = agent, env {}, no profile (a profile needs both fields).
/// Scalars: strings are taken verbatim (a number in args is its text), booleans are
/// true/false, integers decimal or 0x-hex. Fails with category usage.
Result<EnablementList> enablement_from_yaml(const YAML::Node& node, const std::string& source_name);

/// Parses a YAML document whose only top-level key is `enablement:`
/// (launchd/examples/enablement.yaml), as above. YAML syntax errors carry the parser's position
/// too.
Result<EnablementList> parse_enablement_yaml(std::string_view text, const std::string& source_name);

} // namespace lume_unlock::enablement

#pragma once

#include "enablement/enablement_list.hpp"
#include "util/result.hpp"
#include "util/yaml_reader.hpp"

#include <string>
#include <string_view>

namespace lume_unlock::enablement {

/// Reads the value of an `enablement:` key (a list of entries; null = empty list) and validates
/// it, failing through `reader`: shape errors as "<source>:<line>:<col>: enablement[1].agent:
/// must be true or false", rule violations as "<source>:<line>:<col>: enablement entry 'x':
/// <reason>" at the offending node. Defaults: args [], agent true, keep_alive = agent, env {},
/// no profile. Scalars are taken as written (a number in args is its text).
EnablementList
read_enablement(const util::YamlReader& reader, const YAML::Node& node, const std::string& field);

/// A `profile:` mapping (apple_family_max, max_threadgroup_memory, each within the bounds of
/// enablement_list.hpp) into `profile`; keys not given keep their value. Returns how many were.
int read_profile(const util::YamlReader& reader,
                 const YAML::Node& node,
                 const std::string& field,
                 Profile& profile);

/// A YAML document whose only key is `enablement:` (launchd/examples/enablement.yaml).
Result<EnablementList> parse_enablement_yaml(std::string_view text, const std::string& source_name);

} // namespace lume_unlock::enablement

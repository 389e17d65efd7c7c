#include "enablement/enablement_list.hpp"
#include "util/json_reader.hpp"
#include "util/text_check.hpp"

namespace lume_unlock::enablement {

namespace {

using nlohmann::json;

EnablementEntry entry_from_json(const util::JsonValue& value) {
  const util::JsonObject object = value.object().only(
      {"name", "program", "resolved_program", "args", "agent", "keep_alive", "env", "profile"});
  EnablementEntry entry;
  entry.name = object.string("name");
  entry.program = object.string("program");
  // Absent in lists applied before programs were resolved: they stay readable.
  entry.resolved_program = object.optional_string("resolved_program");
  entry.args = object.at("args", "an array of strings").strings();
  entry.agent = object.boolean("agent");
  entry.keep_alive = object.boolean("keep_alive");
  for (const auto& [key, item] : object.object("env").members()) {
    entry.env[key] = item.string();
  }
  if (const auto profile = object.find("profile")) {
    const util::JsonObject p =
        profile->object().only({"apple_family_max", "max_threadgroup_memory"});
    entry.profile = Profile{p.unsigned_integer("apple_family_max"),
                            p.unsigned_integer("max_threadgroup_memory")};
  }
  return entry;
}

} // namespace

nlohmann::json enablement_to_json(const EnablementList& list) {
  json entries = json::array();
  for (const EnablementEntry& entry : list.entries) {
    json item = {{"name", entry.name},
                 {"program", entry.program},
                 {"args", entry.args},
                 {"agent", entry.agent},
                 {"keep_alive", entry.keep_alive},
                 {"env", json::object()}};
    for (const auto& [key, value] : entry.env) {
      item["env"][key] = value;
    }
    if (entry.resolved_program) {
      item["resolved_program"] = *entry.resolved_program;
    }
    if (entry.profile) {
      item["profile"] = {{"apple_family_max", entry.profile->apple_family_max},
                         {"max_threadgroup_memory", entry.profile->max_threadgroup_memory}};
    }
    entries.push_back(std::move(item));
  }
  return json{{"schema", k_enablement_schema}, {"enablement", std::move(entries)}};
}

std::string render_enablement_json(const EnablementList& list) {
  // Invalid UTF-8 cannot reach here from a validated list; replacing keeps rendering total.
  return enablement_to_json(list).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<EnablementList> parse_enablement_json(std::string_view text,
                                             const std::string& source_name) {
  LUME_UNLOCK_TRY_ASSIGN(
      EnablementList list,
      util::read_json_text(
          text, {ErrorCategory::usage, source_name}, [](const util::JsonValue& value) {
            const util::JsonObject document = value.object().only({"schema", "enablement"});
            const util::JsonValue schema = document.at("schema", "a string");
            if (schema.string() != k_enablement_schema) {
              schema.fail("unsupported schema " + util::quote_for_message(schema.string()) +
                          " (expected '" + k_enablement_schema + "')");
            }
            EnablementList list;
            for (const auto& entry : document.array("enablement")) {
              list.entries.push_back(entry_from_json(entry));
            }
            return list;
          }));
  if (auto found = find_violation(list)) {
    return violation_error(entry_label(list, found->index), found->violation, source_name);
  }
  return list;
}

} // namespace lume_unlock::enablement

#include "enablement_yaml.hpp"

#include "util/edit_distance.hpp"
#include "util/text_check.hpp"

#include <yaml-cpp/yaml.h>

#include <set>

namespace lume_unlock::enablement {

namespace {

const std::vector<std::string> k_entry_keys = {
    "name", "program", "args", "agent", "keep_alive", "env", "profile"};
const std::vector<std::string> k_profile_keys = {"apple_family_max", "max_threadgroup_memory"};

/// Thrown inside this file only and turned into a Result at the two entry points.
struct LoadError {
  Error error;
};

std::string position(const std::string& source, const YAML::Mark& mark) {
  // An empty document has a null mark (-1): point at its start.
  const int line = mark.line < 0 ? 0 : mark.line;
  const int column = mark.column < 0 ? 0 : mark.column;
  return source + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1);
}

[[noreturn]] void fail(const std::string& source,
                       const YAML::Mark& mark,
                       const std::string& what,
                       const std::string& why,
                       const std::string& hint = {}) {
  throw LoadError{Error(ErrorCategory::usage, position(source, mark) + ": " + what, why, hint)};
}

/// Where each field of one entry came from, so a violation found later points at its node.
struct EntryMarks {
  YAML::Mark entry, name, program, agent, keep_alive, apple_family_max, max_threadgroup_memory;
  std::vector<YAML::Mark> args;
  std::map<std::string, std::pair<YAML::Mark, YAML::Mark>> env; // key -> (key node, value node)
};

class EntryReader {
public:
  EntryReader(const std::string& source, std::size_t index) : m_source(source), m_index(index) {}

  EnablementEntry read(const YAML::Node& node, EntryMarks& marks) {
    marks.entry = node.Mark();
    marks.name = marks.program = marks.agent = marks.keep_alive = marks.entry;
    marks.apple_family_max = marks.max_threadgroup_memory = marks.entry;
    if (!node.IsMap()) {
      fail(m_source, node.Mark(), label(), "must be a mapping with 'name' and 'program'");
    }
    // The name first, so every later message can say which entry it is about.
    if (const YAML::Node name = node["name"]) {
      m_entry.name = scalar(name, "name must be a string");
      m_has_name = true;
      marks.name = name.Mark();
    }
    std::set<std::string> seen;
    bool keep_alive_given = false;
    // Copies: the pair yaml-cpp's iterator hands out is a temporary.
    for (const auto& pair : node) {
      const YAML::Node key_node = pair.first;
      const YAML::Node value_node = pair.second;
      const std::string key = scalar(key_node, "keys must be strings");
      if (!seen.insert(key).second) {
        fail(m_source, key_node.Mark(), label(), "duplicate key " + util::quote_for_message(key));
      }
      if (key == "name") {
        continue;
      } else if (key == "program") {
        m_entry.program = scalar(value_node, "program must be a string");
        marks.program = value_node.Mark();
      } else if (key == "args") {
        read_args(value_node, marks);
      } else if (key == "agent") {
        m_entry.agent = boolean(value_node, "agent");
        marks.agent = value_node.Mark();
      } else if (key == "keep_alive") {
        m_entry.keep_alive = boolean(value_node, "keep_alive");
        marks.keep_alive = value_node.Mark();
        keep_alive_given = true;
      } else if (key == "env") {
        read_env(value_node, marks);
      } else if (key == "profile") {
        read_profile(value_node, marks);
      } else {
        unknown_key(key_node, key, k_entry_keys);
      }
    }
    if (!keep_alive_given) {
      m_entry.keep_alive = m_entry.agent;
      marks.keep_alive = marks.agent;
    }
    return m_entry;
  }

  std::string label() const {
    return m_has_name ? entry_label(m_entry.name)
                      : "enablement entry " + std::to_string(m_index + 1);
  }

private:
  std::string scalar(const YAML::Node& node, const std::string& why) {
    if (!node.IsScalar()) {
      fail(m_source, node.Mark(), label(), why);
    }
    return node.Scalar();
  }

  bool boolean(const YAML::Node& node, const std::string& key) {
    const std::string text = scalar(node, key + " must be true or false");
    if (text == "true" || text == "True" || text == "TRUE") {
      return true;
    }
    if (text == "false" || text == "False" || text == "FALSE") {
      return false;
    }
    fail(m_source,
         node.Mark(),
         label(),
         key + " must be true or false, not " + util::quote_for_message(text));
  }

  std::uint64_t integer(const YAML::Node& node, const std::string& key) {
    const std::string text = scalar(node, "profile " + key + " must be an integer");
    const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    const std::string digits = hex ? text.substr(2) : text;
    const std::uint64_t base = hex ? 16 : 10;
    std::uint64_t value = 0;
    bool ok = !digits.empty();
    for (char c : digits) {
      std::uint64_t digit = 0;
      if (c >= '0' && c <= '9') {
        digit = static_cast<std::uint64_t>(c - '0');
      } else if (hex && c >= 'a' && c <= 'f') {
        digit = static_cast<std::uint64_t>(c - 'a' + 10);
      } else if (hex && c >= 'A' && c <= 'F') {
        digit = static_cast<std::uint64_t>(c - 'A' + 10);
      } else {
        ok = false;
        break;
      }
      if (value > (UINT64_MAX - digit) / base) {
        ok = false;
        break;
      }
      value = value * base + digit;
    }
    if (!ok) {
      fail(m_source,
           node.Mark(),
           label(),
           "profile " + key + " " + util::quote_for_message(text) +
               " is not a decimal or 0x-hex integer");
    }
    return value;
  }

  void read_args(const YAML::Node& node, EntryMarks& marks) {
    if (node.IsNull()) {
      return;
    }
    if (!node.IsSequence()) {
      fail(m_source, node.Mark(), label(), "args must be a list of strings");
    }
    for (const YAML::Node& item : node) {
      m_entry.args.push_back(scalar(item, "args must be a list of strings"));
      marks.args.push_back(item.Mark());
    }
  }

  void read_env(const YAML::Node& node, EntryMarks& marks) {
    if (node.IsNull()) {
      return;
    }
    if (!node.IsMap()) {
      fail(m_source, node.Mark(), label(), "env must be a mapping of variable names to strings");
    }
    // Copies: the pair yaml-cpp's iterator hands out is a temporary.
    for (const auto& pair : node) {
      const YAML::Node key_node = pair.first;
      const YAML::Node value_node = pair.second;
      const std::string key = scalar(key_node, "env keys must be strings");
      const std::string value =
          scalar(value_node, "env " + util::quote_for_message(key) + " value must be a string");
      if (!m_entry.env.emplace(key, value).second) {
        fail(m_source,
             key_node.Mark(),
             label(),
             "duplicate env key " + util::quote_for_message(key));
      }
      marks.env[key] = {key_node.Mark(), value_node.Mark()};
    }
  }

  void read_profile(const YAML::Node& node, EntryMarks& marks) {
    const std::string needs =
        "profile must be a mapping with apple_family_max and max_threadgroup_memory";
    if (!node.IsMap()) {
      fail(m_source, node.Mark(), label(), needs);
    }
    Profile profile;
    bool has_family = false;
    bool has_memory = false;
    // Copies: the pair yaml-cpp's iterator hands out is a temporary.
    for (const auto& pair : node) {
      const YAML::Node key_node = pair.first;
      const YAML::Node value_node = pair.second;
      const std::string key = scalar(key_node, "profile keys must be strings");
      if (key == "apple_family_max" && !has_family) {
        profile.apple_family_max = integer(value_node, key);
        marks.apple_family_max = value_node.Mark();
        has_family = true;
      } else if (key == "max_threadgroup_memory" && !has_memory) {
        profile.max_threadgroup_memory = integer(value_node, key);
        marks.max_threadgroup_memory = value_node.Mark();
        has_memory = true;
      } else if (key == "apple_family_max" || key == "max_threadgroup_memory") {
        fail(m_source, key_node.Mark(), label(), "duplicate key " + util::quote_for_message(key));
      } else {
        unknown_key(key_node, key, k_profile_keys);
      }
    }
    if (!has_family || !has_memory) {
      fail(m_source, node.Mark(), label(), needs);
    }
    m_entry.profile = profile;
  }

  [[noreturn]] void unknown_key(const YAML::Node& key_node,
                                const std::string& key,
                                const std::vector<std::string>& known) {
    std::string hint;
    if (auto match = util::closest_match(key, known)) {
      hint = "did you mean '" + *match + "'?";
    }
    fail(m_source, key_node.Mark(), label(), "unknown key " + util::quote_for_message(key), hint);
  }

  const std::string& m_source;
  std::size_t m_index;
  EnablementEntry m_entry;
  bool m_has_name = false;
};

YAML::Mark mark_of(const Violation& violation, const EntryMarks& marks) {
  switch (violation.field) {
  case Field::name:
    return marks.name;
  case Field::program:
    return marks.program;
  case Field::arg:
    return violation.arg_index < marks.args.size() ? marks.args[violation.arg_index] : marks.entry;
  case Field::env_key:
  case Field::env_value: {
    const auto it = marks.env.find(violation.env_key);
    if (it == marks.env.end()) {
      return marks.entry;
    }
    return violation.field == Field::env_key ? it->second.first : it->second.second;
  }
  case Field::apple_family_max:
    return marks.apple_family_max;
  case Field::max_threadgroup_memory:
    return marks.max_threadgroup_memory;
  case Field::keep_alive:
    return marks.keep_alive;
  case Field::resolved_program: // never in a recipe: found when the list is applied
    return marks.entry;
  }
  return marks.entry;
}

EnablementList read_list(const YAML::Node& node, const std::string& source) {
  EnablementList list;
  if (!node || node.IsNull()) {
    return list;
  }
  if (!node.IsSequence()) {
    fail(source, node.Mark(), "enablement", "must be a list of entries");
  }
  std::vector<EntryMarks> marks(node.size());
  std::size_t index = 0;
  for (const YAML::Node& item : node) {
    EntryReader reader(source, index);
    list.entries.push_back(reader.read(item, marks[index]));
    ++index;
  }
  if (auto found = find_violation(list)) {
    const EntryMarks& entry_marks = marks[found->index];
    throw LoadError{violation_error(entry_label(list, found->index),
                                    found->violation,
                                    position(source, mark_of(found->violation, entry_marks)))};
  }
  return list;
}

} // namespace

Result<EnablementList> enablement_from_yaml(const YAML::Node& node,
                                            const std::string& source_name) {
  try {
    return read_list(node, source_name);
  } catch (const LoadError& e) {
    return e.error;
  }
}

Result<EnablementList> parse_enablement_yaml(std::string_view text,
                                             const std::string& source_name) {
  YAML::Node document;
  try {
    document = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    return Error(ErrorCategory::usage, position(source_name, e.mark) + ": yaml", e.msg);
  }
  try {
    if (!document.IsMap()) {
      fail(source_name,
           document.Mark(),
           "enablement list",
           "expected a mapping with the key 'enablement'");
    }
    for (const auto& pair : document) {
      const YAML::Node key_node = pair.first;
      const std::string key = key_node.IsScalar() ? key_node.Scalar() : std::string();
      if (key != "enablement") {
        std::string hint;
        if (auto match = util::closest_match(key, {"enablement"})) {
          hint = "did you mean '" + *match + "'?";
        }
        fail(source_name,
             key_node.Mark(),
             "enablement list",
             "unknown key " + util::quote_for_message(key),
             hint);
      }
    }
    if (!document["enablement"]) {
      fail(source_name, document.Mark(), "enablement list", "key 'enablement' is missing");
    }
    return read_list(document["enablement"], source_name);
  } catch (const LoadError& e) {
    return e.error;
  }
}

} // namespace lume_unlock::enablement

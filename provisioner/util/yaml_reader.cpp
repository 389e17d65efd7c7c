#include "util/yaml_reader.hpp"

#include "util/text.hpp"

#include <set>

namespace lume_unlock::util {

namespace {

/// "0", up to 18 decimal digits without a leading zero, or "0x" and up to 15 hex digits: what
/// fits a long long with room for the range check.
bool is_whole_number(std::string_view text) {
  const auto all_of = [](std::string_view s, std::string_view allowed) {
    return s.find_first_not_of(allowed) == std::string_view::npos;
  };
  if (starts_with(text, "0x")) {
    const std::string_view hex = text.substr(2);
    return !hex.empty() && hex.size() <= 15 && all_of(hex, "0123456789abcdefABCDEF");
  }
  return text == "0" ||
         (!text.empty() && text.size() <= 18 && text[0] != '0' && all_of(text, "0123456789"));
}

} // namespace

YAML::Node YamlReader::document(std::string_view text,
                                const std::string& what,
                                const std::string& hint) const {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    throw YamlError{Error(ErrorCategory::usage, where(e.mark), "invalid YAML: " + e.msg)};
  }
  if (!root || root.IsNull()) {
    throw YamlError{Error(ErrorCategory::usage, m_source, what + " is empty", hint)};
  }
  return root;
}

void YamlReader::fail(const YAML::Mark& mark,
                      const std::string& field,
                      const std::string& why,
                      const std::string& hint) const {
  const std::string at = where(mark);
  throw YamlError{Error(ErrorCategory::usage, field.empty() ? at : at + ": " + field, why, hint)};
}

std::string YamlReader::where(const YAML::Mark& mark) const {
  if (mark.line < 0) {
    return m_source;
  }
  return m_source + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

void YamlReader::mapping(const YAML::Node& node,
                         const std::string& field,
                         const std::vector<Key>& keys) const {
  std::vector<std::string> names;
  for (const auto& key : keys) {
    names.emplace_back(key.name);
  }
  entries(
      node, field, [&](const YAML::Node& key_node, const std::string& name, const YAML::Node& v) {
        const std::string child = field.empty() ? name : field + "." + name;
        for (const auto& key : keys) {
          if (name == key.name) {
            return key.handle(v, child);
          }
        }
        fail(key_node, child, "unknown key", unknown_key_hint(name, names));
      });
}

void YamlReader::entries(
    const YAML::Node& node,
    const std::string& field,
    const std::function<void(const YAML::Node&, const std::string&, const YAML::Node&)>& each)
    const {
  if (!node.IsMap()) {
    fail(node, field, "must be a mapping of keys to values");
  }
  std::set<std::string> seen;
  // Copies: the pair yaml-cpp's iterator hands out is a temporary.
  for (const auto& pair : node) {
    const YAML::Node key = pair.first;
    const YAML::Node value = pair.second;
    const std::string name = text(key, field);
    if (!seen.insert(name).second) {
      fail(key, field.empty() ? name : field + "." + name, "is given twice");
    }
    each(key, name, value);
  }
}

void YamlReader::sequence(const YAML::Node& node,
                          const std::string& field,
                          const Handler& each) const {
  if (!node.IsSequence()) {
    fail(node, field, "must be a list");
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    each(node[i], field + "[" + std::to_string(i) + "]");
  }
}

std::string YamlReader::text(const YAML::Node& node, const std::string& field) const {
  if (!node.IsScalar()) {
    fail(node, field, "must be a string");
  }
  return node.Scalar();
}

std::string YamlReader::string(const YAML::Node& node, const std::string& field) const {
  if (!node.IsScalar() || node.Tag() == "tag:yaml.org,2002:null" || node.Scalar().empty()) {
    fail(node, field, "must be a non-empty string");
  }
  return node.Scalar();
}

bool YamlReader::boolean(const YAML::Node& node,
                         const std::string& field,
                         const std::string& hint) const {
  if (node.IsScalar() && node.Tag() != "!") {
    for (const char* word : {"true", "True", "TRUE"}) {
      if (node.Scalar() == word) {
        return true;
      }
    }
    for (const char* word : {"false", "False", "FALSE"}) {
      if (node.Scalar() == word) {
        return false;
      }
    }
  }
  fail(node, field, "must be true or false", hint);
}

long long YamlReader::integer(const YAML::Node& node,
                              const std::string& field,
                              long long min,
                              long long max) const {
  const std::string range = std::to_string(min) + " to " + std::to_string(max);
  if (!node.IsScalar() || node.Tag() == "!") {
    fail(node, field, "must be a whole number from " + range);
  }
  const std::string text = node.Scalar();
  const bool negative = min < 0 && text.size() > 1 && text[0] == '-' && text[1] != '0';
  if (!is_whole_number(negative ? text.substr(1) : text)) {
    fail(node, field, "'" + text + "' is not a whole number from " + range);
  }
  const long long value = std::stoll(text, nullptr, 0);
  if (value < min || value > max) {
    fail(node, field, std::to_string(value) + " is out of range (" + range + ")");
  }
  return value;
}

} // namespace lume_unlock::util

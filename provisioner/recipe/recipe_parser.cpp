#include "recipe_parser.hpp"

#include "util/edit_distance.hpp"

#include <string>

namespace lume_unlock::recipe {

bool all_of_in(std::string_view text, std::string_view allowed) {
  return text.find_first_not_of(allowed) == std::string_view::npos;
}

namespace {

/// "0", up to 18 decimal digits without a leading zero, or "0x" and up to 15 hex digits: what
/// fits a long long with room for the range check.
bool is_whole_number(std::string_view text) {
  if (text.rfind("0x", 0) == 0) {
    const std::string_view hex = text.substr(2);
    return !hex.empty() && hex.size() <= 15 && all_of_in(hex, "0123456789abcdefABCDEF");
  }
  return text == "0" ||
         (!text.empty() && text.size() <= 18 && text[0] != '0' && all_of_in(text, k_digits));
}

} // namespace

std::string Parser::where(const YAML::Node& node) const {
  const YAML::Mark mark = node.Mark();
  std::string where = m_source;
  if (mark.line >= 0) {
    where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }
  return where;
}

void Parser::mapping(const YAML::Node& node,
                     const std::string& field,
                     const std::vector<Key>& keys) const {
  if (!node.IsMap()) {
    fail(node, field, "must be a mapping of keys to values");
  }
  std::vector<std::string> names;
  for (const auto& key : keys) {
    names.emplace_back(key.name);
  }
  for (const auto& item : node) {
    const std::string name = item.first.as<std::string>();
    const std::string child = field.empty() ? name : field + "." + name;
    const Key* found = nullptr;
    for (const auto& key : keys) {
      if (name == key.name) {
        found = &key;
      }
    }
    if (found == nullptr) {
      std::string hint = "known keys here: ";
      for (std::size_t i = 0; i < names.size(); ++i) {
        hint += (i ? ", " : "") + names[i];
      }
      if (auto match = util::closest_match(name, names)) {
        hint = "did you mean '" + *match + "'? (" + hint + ")";
      }
      fail(item.first, child, "unknown key", hint);
    }
    found->handle(item.second, child);
  }
}

long long Parser::integer(const YAML::Node& node,
                          const std::string& field,
                          long long min,
                          long long max) const {
  if (!node.IsScalar() || node.Tag() == "!") {
    fail(node,
         field,
         "must be a whole number from " + std::to_string(min) + " to " + std::to_string(max));
  }
  const std::string text = node.Scalar();
  const bool negative = min < 0 && text.size() > 1 && text[0] == '-' && text[1] != '0';
  if (!is_whole_number(negative ? text.substr(1) : text)) {
    fail(node,
         field,
         "'" + text + "' is not a whole number from " + std::to_string(min) + " to " +
             std::to_string(max));
  }
  const long long value = std::stoll(text, nullptr, 0);
  if (value < min || value > max) {
    fail(node,
         field,
         std::to_string(value) + " is out of range (" + std::to_string(min) + " to " +
             std::to_string(max) + ")");
  }
  return value;
}

} // namespace lume_unlock::recipe

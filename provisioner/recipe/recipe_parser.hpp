#pragma once

// The YAML walk every recipe section shares: a key table per mapping, typed scalars, and errors
// as `file:line:col: field`. Internal to recipe/: the sections' parsers include it, nothing else.

#include "recipe.hpp"
#include "util/error.hpp"
#include "util/result.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::recipe {

// Plain scans instead of std::regex: no input length can make them recurse (issue 15).

/// True when every character of `text` is one of `allowed`.
bool all_of_in(std::string_view text, std::string_view allowed);

inline constexpr std::string_view k_digits = "0123456789";

/// Thrown inside the parser and turned into a Result at its edge.
struct RecipeError {
  Error error;
};

class Parser {
public:
  explicit Parser(std::string source_name) : m_source(std::move(source_name)) {}

  [[noreturn]] void fail(const YAML::Node& node,
                         const std::string& field,
                         const std::string& why,
                         const std::string& hint = {}) const {
    throw RecipeError{Error(ErrorCategory::usage, where(node) + ": " + field, why, hint)};
  }

  /// "recipe.yaml:12:7", the source and the node's line and column (just the source when the
  /// node has no mark).
  std::string where(const YAML::Node& node) const;

  using Handler = std::function<void(const YAML::Node& value, const std::string& field)>;
  struct Key {
    const char* name;
    Handler handle;
  };

  /// Walks a mapping with a key table: every key must be known, each handled once.
  void
  mapping(const YAML::Node& node, const std::string& field, const std::vector<Key>& keys) const;

  std::string string(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar() || node.Tag() == "tag:yaml.org,2002:null" || node.Scalar().empty()) {
      fail(node, field, "must be a non-empty string");
    }
    return node.Scalar();
  }

  /// A whole number from `min` to `max` (decimal, or hex with 0x).
  long long
  integer(const YAML::Node& node, const std::string& field, long long min, long long max) const;

  /// A value parsed from its scalar text by `parse` (a verify:: parser shared with the CLI
  /// flags), its error reported at the node.
  template <class T>
  T parsed(const YAML::Node& node,
           const std::string& field,
           const std::function<Result<T>(std::string_view, const std::string&)>& parse,
           const std::string& example) const {
    if (!node.IsScalar() || node.Tag() == "tag:yaml.org,2002:null" || node.Scalar().empty()) {
      fail(node, field, "must be a number", "for example " + example);
    }
    auto value = parse(node.Scalar(), field);
    if (!value) {
      fail(node, field, value.error().why(), value.error().hint());
    }
    return value.value();
  }

  std::uint64_t
  size(const YAML::Node& node, const std::string& field, std::uint64_t ceiling) const {
    auto bytes = parse_vm_size(string(node, field), ceiling);
    if (!bytes) {
      fail(node, field, bytes.error().why(), bytes.error().hint());
    }
    return bytes.value();
  }

private:
  std::string m_source;
};

} // namespace lume_unlock::recipe

#pragma once

// The one walk of a YAML document (recipes, the enablement list): a key table per mapping with a
// "did you mean" hint, typed scalars, and every error as `file:line:col: field: why`, the field a
// path like `install[0].dest`.

#include "util/error.hpp"
#include "util/result.hpp"

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::util {

/// Thrown inside a walk and turned into a Result at its edge (YamlReader::run).
struct YamlError {
  Error error;
};

class YamlReader {
public:
  explicit YamlReader(std::string source_name) : m_source(std::move(source_name)) {}

  /// `f()` as a Result: a YamlError thrown inside it becomes the error (category usage).
  template <class F>
  auto run(F&& f) const -> Result<decltype(f())> {
    try {
      return f();
    } catch (const YamlError& e) {
      return e.error;
    } catch (const YAML::Exception& e) {
      return Error(ErrorCategory::usage, m_source, std::string("invalid YAML: ") + e.what());
    }
  }

  /// The document in `text`. Fails "file:line:col: invalid YAML: …", or "file: <what> is empty"
  /// with `hint` for a document with nothing in it.
  YAML::Node
  document(std::string_view text, const std::string& what, const std::string& hint) const;

  [[noreturn]] void fail(const YAML::Node& node,
                         const std::string& field,
                         const std::string& why,
                         const std::string& hint = {}) const {
    fail(node.Mark(), field, why, hint);
  }
  [[noreturn]] void fail(const YAML::Mark& mark,
                         const std::string& field,
                         const std::string& why,
                         const std::string& hint = {}) const;

  /// "recipe.yaml:12:7": the source and the node's line and column (the source alone when the
  /// node has no position).
  std::string where(const YAML::Mark& mark) const;
  std::string where(const YAML::Node& node) const { return where(node.Mark()); }

  using Handler = std::function<void(const YAML::Node& value, const std::string& field)>;
  struct Key {
    const char* name;
    Handler handle;
  };

  /// Walks a mapping with a key table: every key must be known, and given once.
  void
  mapping(const YAML::Node& node, const std::string& field, const std::vector<Key>& keys) const;

  /// Walks a mapping whose keys are the user's (`env:`): `each(key node, key, value)`, each key
  /// given once.
  void entries(const YAML::Node& node,
               const std::string& field,
               const std::function<void(const YAML::Node&, const std::string&, const YAML::Node&)>&
                   each) const;

  /// Walks a sequence: `each(item, "field[i]")`.
  void sequence(const YAML::Node& node, const std::string& field, const Handler& each) const;

  /// A scalar's text as written (may be empty; a number is its digits).
  std::string text(const YAML::Node& node, const std::string& field) const;
  /// A scalar that is neither null nor empty.
  std::string string(const YAML::Node& node, const std::string& field) const;
  /// true or false (YAML 1.2's words, unquoted: "yes" and "on" are not booleans).
  bool
  boolean(const YAML::Node& node, const std::string& field, const std::string& hint = {}) const;
  /// A whole number from `min` to `max` (decimal, or hex with 0x).
  long long
  integer(const YAML::Node& node, const std::string& field, long long min, long long max) const;

  /// A value parsed from its scalar text by `parse` (a parser shared with the CLI flags), its
  /// error reported at the node.
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

private:
  std::string m_source;
};

} // namespace lume_unlock::util

#pragma once

#include "util/result.hpp"

#include <string>
#include <string_view>

namespace lume_unlock::lume {

/// The name of a Lume VM, valid by construction. Lume itself validates nothing (lume-api.md §7):
/// the name becomes a directory name verbatim, so '/', '..', spaces, ':', '%', '?' and '#' make
/// a VM unreachable or escape its location. Accepted: [A-Za-z0-9._-], not "." or "..", not
/// starting with '-' (it would read as an option to `lume` and to our own CLI), at most 255
/// bytes (one directory name).
class VmName {
public:
  /// Checks `text`; fails with a usage error (exit 2) that quotes it and names the first bad
  /// character.
  static Result<VmName> parse(std::string_view text);

  /// A name written in the code (a literal): throws the parse error when it is not valid, so it
  /// is explicit, never a silent conversion.
  explicit VmName(const char* literal);

  const std::string& str() const { return m_name; }
  operator const std::string&() const { return m_name; }

  bool operator==(const VmName& other) const { return m_name == other.m_name; }
  bool operator!=(const VmName& other) const { return m_name != other.m_name; }

private:
  explicit VmName(std::string name) : m_name(std::move(name)) {}
  std::string m_name;
};

/// VmName::parse without keeping the value: ok, or the usage error it gives.
Status check_vm_name(std::string_view name);

} // namespace lume_unlock::lume

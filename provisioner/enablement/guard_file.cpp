#include "guard_file.hpp"

#include <set>

namespace lume_unlock::enablement {

std::string render_guard_file(const EnablementList& list) {
  std::set<std::string> programs;
  for (const EnablementEntry& entry : list.entries) {
    programs.insert(guarded_path(entry));
  }
  std::string out =
      "# lume-unlock: executables the Metal capability shim may enable (LUME_UNLOCK_ENABLEMENT).\n"
      "# Generated from enablement.json; change it with 'lume-unlock allow add/remove', not by "
      "hand.\n";
  for (const std::string& program : programs) {
    out += program;
    out += '\n';
  }
  return out;
}

} // namespace lume_unlock::enablement

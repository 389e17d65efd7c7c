#pragma once
// The real Mach-O files tests/fixtures/macho builds (see its CMakeLists.txt for how each is made).
#include "support/file_io.hpp"

#include <string>

namespace lume_unlock::test {

inline std::string macho_fixture(const std::string& name) {
  return slurp(std::string(LUME_UNLOCK_MACHO_FIXTURES) + "/" + name);
}

} // namespace lume_unlock::test

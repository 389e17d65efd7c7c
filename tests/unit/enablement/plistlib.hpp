#pragma once

// Test helper: reads a property list with python's plistlib, an independent parser (the one
// guest-sim's plutil uses too), and returns it as JSON.

#include <nlohmann/json.hpp>

#include <string>

namespace lume_unlock::enablement::testing {

struct PlistParse {
  bool python_available = false;
  bool ok = false;
  nlohmann::json value;
  std::string error;
};

/// Writes `bytes` to a temporary file and loads it with /usr/bin/python3's plistlib.
PlistParse parse_with_plistlib(const std::string& bytes);

} // namespace lume_unlock::enablement::testing

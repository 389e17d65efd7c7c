#include "lume/vm_name.hpp"

#include <cstdio>

namespace lume_unlock::lume {

namespace {

bool allowed(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

std::string describe(char c) {
  if (c == ' ') {
    return "a space";
  }
  auto byte = static_cast<unsigned char>(c);
  if (byte < 0x20 || byte >= 0x7f) {
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "0x%02x", byte);
    return std::string("byte ") + buffer;
  }
  return std::string("'") + c + "'";
}

Error name_error(std::string_view name, const std::string& why) {
  return Error(ErrorCategory::usage,
               "invalid VM name '" + std::string(name) + "'",
               why,
               "use only letters, digits, '.', '_' and '-' (for example 'ci-tahoe')");
}

} // namespace

Result<VmName> VmName::parse(std::string_view name) {
  if (name.empty()) {
    return name_error(name, "the name is empty");
  }
  if (name == "." || name == "..") {
    return name_error(name, "'.' and '..' name directories, not VMs");
  }
  if (name.front() == '-') {
    return name_error(name, "it starts with '-', which reads as an option");
  }
  if (name.size() > 255) {
    return name_error(name, "longer than 255 bytes");
  }
  for (char c : name) {
    if (!allowed(c)) {
      return name_error(name, describe(c) + " is not allowed");
    }
  }
  return VmName(std::string(name));
}

VmName::VmName(const char* literal) : VmName(parse(literal).value_or_throw()) {}

Status check_vm_name(std::string_view name) {
  LUME_UNLOCK_TRY(VmName::parse(name));
  return ok_status();
}

} // namespace lume_unlock::lume

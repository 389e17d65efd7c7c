#include "macho/entitlements.hpp"

#include <string>

namespace lume_unlock::macho {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

} // namespace

bool entitlement_is_true(std::string_view plist, std::string_view key) {
  const std::string element = "<key>" + std::string(key) + "</key>";
  for (std::size_t at = plist.find(element); at != std::string_view::npos;
       at = plist.find(element, at + 1)) {
    std::size_t next = at + element.size();
    while (next < plist.size() && is_space(plist[next])) {
      ++next;
    }
    if (plist.substr(next, 7) == "<true/>") {
      return true;
    }
  }
  return false;
}

} // namespace lume_unlock::macho

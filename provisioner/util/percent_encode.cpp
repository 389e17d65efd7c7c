#include "util/percent_encode.hpp"

namespace lume_unlock::util {

namespace {

bool unreserved(unsigned char b) {
  return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '-' ||
         b == '.' || b == '_' || b == '~';
}

} // namespace

std::string percent_encode(std::string_view text, std::string_view also_keep) {
  static const char* const k_hex = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    auto b = static_cast<unsigned char>(c);
    if (unreserved(b) || also_keep.find(c) != std::string_view::npos) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(k_hex[b >> 4]);
      out.push_back(k_hex[b & 15]);
    }
  }
  return out;
}

} // namespace lume_unlock::util

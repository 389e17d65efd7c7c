#include "util/body_preview.hpp"

namespace lume_unlock::util {

std::string body_preview(const std::string& body) {
  std::string out;
  for (std::size_t i = 0; i < body.size() && i < k_body_preview_limit; ++i) {
    auto c = static_cast<unsigned char>(body[i]);
    out += (c < 0x20 || c >= 0x7f) ? '.' : static_cast<char>(c);
  }
  if (body.size() > k_body_preview_limit) {
    out += "... (" + std::to_string(body.size()) + " bytes)";
  }
  return out;
}

} // namespace lume_unlock::util

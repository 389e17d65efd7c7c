#include "util/random_id.hpp"

#include <random>

namespace lume_unlock::util {

std::string random_hex(std::size_t digits) {
  std::random_device device;
  std::uniform_int_distribution<unsigned> digit(0, 15);
  std::string out;
  for (std::size_t i = 0; i < digits; ++i) {
    out += "0123456789abcdef"[digit(device)];
  }
  return out;
}

} // namespace lume_unlock::util

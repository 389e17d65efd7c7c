#include "support/random_file.hpp"

#include "util/sha256.hpp"

#include <cstring>
#include <fstream>
#include <random>

namespace lume_unlock::test {

std::string write_random_file(const std::string& path, std::uint64_t mib, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string block(1 << 20, '\0');
  util::Sha256 hasher;
  std::ofstream out(path, std::ios::binary);
  for (std::uint64_t i = 0; i < mib; ++i) {
    for (std::size_t j = 0; j < block.size(); j += 8) {
      const std::uint64_t v = rng();
      std::memcpy(&block[j], &v, 8);
    }
    hasher.update(block);
    out.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
  return hasher.finish_hex();
}

} // namespace lume_unlock::test

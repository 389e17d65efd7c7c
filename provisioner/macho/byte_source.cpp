#include "macho/byte_source.hpp"

namespace lume_unlock::macho {

ReadAt read_from_bytes(std::string_view bytes) {
  return [bytes](std::uint64_t offset, std::size_t length) -> Result<std::string> {
    if (offset >= bytes.size()) {
      return std::string();
    }
    const std::size_t start = static_cast<std::size_t>(offset);
    return std::string(bytes.substr(start, std::min(length, bytes.size() - start)));
  };
}

Result<std::string> read_exact(const ReadAt& source,
                               std::uint64_t offset,
                               std::size_t length,
                               const std::string& what) {
  LUME_UNLOCK_TRY_ASSIGN(auto bytes, source(offset, length));
  if (bytes.size() != length) {
    return malformed(what,
                     "the file is truncated: " + std::to_string(length) + " bytes at offset " +
                         std::to_string(offset) + ", but only " + std::to_string(bytes.size()) +
                         " are there");
  }
  return bytes;
}

bool fits(std::uint64_t a, std::uint64_t b, std::uint64_t limit) {
  return a <= limit && b <= limit - a;
}

std::uint32_t u32(std::string_view bytes, std::size_t at, bool big) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const auto byte = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i]));
    value |= big ? byte << (8 * (3 - i)) : byte << (8 * i);
  }
  return value;
}

std::uint64_t u64(std::string_view bytes, std::size_t at, bool big) {
  const std::uint64_t first = u32(bytes, at, big);
  const std::uint64_t second = u32(bytes, at + 4, big);
  return big ? (first << 32) | second : (second << 32) | first;
}

Error malformed(const std::string& what, const std::string& why) {
  return Error(ErrorCategory::usage,
               what,
               why,
               "the program file is damaged or not a complete Mach-O; reinstall the program");
}

} // namespace lume_unlock::macho

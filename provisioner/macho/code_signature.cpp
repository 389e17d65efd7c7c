#include "macho/macho.hpp"

#include <set>
#include <string>

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

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

constexpr std::uint32_t k_superblob_magic = 0xfade0cc0;
constexpr std::uint32_t k_code_directory_magic = 0xfade0c02;
constexpr std::uint32_t k_entitlements_magic = 0xfade7171;
constexpr std::uint32_t k_slot_code_directory = 0;
constexpr std::uint32_t k_slot_entitlements = 5;
constexpr std::size_t k_code_directory_prefix = 16; // magic, length, version, flags
const std::string k_what = "reading the code signature";

std::string hex(std::uint32_t value) {
  static const char* digits = "0123456789abcdef";
  std::string text = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) {
    text += digits[(value >> shift) & 0xf];
  }
  return text;
}

/// The blob at `at` (relative to the SuperBlob): checks its magic and that its length fits.
Result<std::uint32_t> blob_length(const ReadAt& source,
                                  std::uint64_t base,
                                  std::uint32_t superblob_length,
                                  std::uint32_t at,
                                  std::uint32_t magic,
                                  std::size_t minimum,
                                  const std::string& name) {
  if (!fits(at, 8, superblob_length)) {
    return malformed(k_what,
                     name + " at offset " + std::to_string(at) + " lies outside the " +
                         std::to_string(superblob_length) + "-byte SuperBlob");
  }
  LUME_UNLOCK_TRY_ASSIGN(auto head, read_exact(source, base + at, 8, k_what));
  if (u32(head, 0, true) != magic) {
    return malformed(k_what,
                     name + " has magic " + hex(u32(head, 0, true)) + ", not " + hex(magic));
  }
  const std::uint32_t length = u32(head, 4, true);
  if (length < minimum || !fits(at, length, superblob_length)) {
    return malformed(k_what,
                     name + " length " + std::to_string(length) + " does not fit the SuperBlob");
  }
  return length;
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

bool CodeSignature::library_validation() const {
  const bool asked = (flags & k_cs_require_library_validation) != 0 || hardened_runtime();
  return asked && !disable_library_validation;
}

Result<CodeSignature>
read_code_signature(const ReadAt& source, std::uint64_t offset, std::uint64_t size) {
  if (size < 12) {
    return malformed(k_what,
                     "LC_CODE_SIGNATURE names " + std::to_string(size) +
                         " bytes, too few for a SuperBlob");
  }
  LUME_UNLOCK_TRY_ASSIGN(auto head, read_exact(source, offset, 12, k_what));
  if (u32(head, 0, true) != k_superblob_magic) {
    return malformed(k_what,
                     "the SuperBlob has magic " + hex(u32(head, 0, true)) + ", not " +
                         hex(k_superblob_magic));
  }
  const std::uint32_t length = u32(head, 4, true);
  const std::uint32_t count = u32(head, 8, true);
  if (length > size || length < 12) {
    return malformed(k_what,
                     "the SuperBlob's length " + std::to_string(length) + " does not fit the " +
                         std::to_string(size) + " bytes of LC_CODE_SIGNATURE");
  }
  if (count > k_max_signature_blobs || 12 + 8 * static_cast<std::uint64_t>(count) > length) {
    return malformed(k_what, "the SuperBlob claims " + std::to_string(count) + " blobs");
  }
  LUME_UNLOCK_TRY_ASSIGN(auto index, read_exact(source, offset + 12, 8 * count, k_what));
  CodeSignature signature;
  bool code_directory = false;
  std::set<std::uint32_t> slots;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint32_t slot = u32(index, 8 * i, true);
    const std::uint32_t at = u32(index, 8 * i + 4, true);
    if (!slots.insert(slot).second) {
      return malformed(k_what, "slot " + std::to_string(slot) + " appears twice");
    }
    if (slot == k_slot_code_directory) {
      LUME_UNLOCK_TRY(blob_length(source,
                                  offset,
                                  length,
                                  at,
                                  k_code_directory_magic,
                                  k_code_directory_prefix,
                                  "the CodeDirectory"));
      LUME_UNLOCK_TRY_ASSIGN(auto prefix,
                             read_exact(source, offset + at, k_code_directory_prefix, k_what));
      signature.flags = u32(prefix, 12, true);
      code_directory = true;
    } else if (slot == k_slot_entitlements) {
      LUME_UNLOCK_TRY_ASSIGN(
          auto blob,
          blob_length(source, offset, length, at, k_entitlements_magic, 8, "the entitlements"));
      if (blob - 8 > k_max_entitlements) {
        return malformed(k_what,
                         "the entitlements are " + std::to_string(blob - 8) +
                             " bytes, more than the " + std::to_string(k_max_entitlements) +
                             " read");
      }
      LUME_UNLOCK_TRY_ASSIGN(auto plist, read_exact(source, offset + at + 8, blob - 8, k_what));
      signature.has_entitlements = true;
      signature.allow_dyld_environment = entitlement_is_true(plist, k_allow_dyld_environment);
      signature.disable_library_validation =
          entitlement_is_true(plist, k_disable_library_validation);
    }
  }
  if (!code_directory) {
    return malformed(k_what, "the SuperBlob has no CodeDirectory");
  }
  return signature;
}

} // namespace lume_unlock::macho

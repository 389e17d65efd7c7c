#include "policy/policy.hpp"

namespace lume_unlock::policy {
namespace {

struct ReasonText {
  const char* name;
  const char* description;
};

// Indexed by Reason's value.
constexpr ReasonText k_reasons[] = {
    {"active", "active"},
    {"disabled", "LUME_UNLOCK_DISABLE=1 is set"},
    {"apple_family_max_unset", "LUME_METAL_APPLE_FAMILY_MAX is not set"},
    {"apple_family_max_malformed", "LUME_METAL_APPLE_FAMILY_MAX is not a decimal or 0x-hex number"},
    {"apple_family_max_out_of_range", "LUME_METAL_APPLE_FAMILY_MAX must be 1001..1999"},
    {"max_threadgroup_memory_malformed",
     "LUME_METAL_MAX_THREADGROUP_MEMORY is not a decimal or 0x-hex number"},
    {"working_set_size_malformed",
     "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE is not a decimal or 0x-hex number"},
    {"enablement_unreadable", "the file named by LUME_UNLOCK_ENABLEMENT cannot be read"},
    {"executable_unresolved", "this process's executable path cannot be resolved"},
    {"executable_not_enabled", "this executable is not listed in the LUME_UNLOCK_ENABLEMENT file"},
    {"private_init_missing",
     "Metal has no -[_MTLDevice initGPUFamilySupport] on this macOS; the device stays stock"},
    {"device_hooks_incomplete",
     "the device's class lacks a capability method the shim replaces; the device stays stock"},
};

const ReasonText* reason_text(Reason reason) noexcept {
  const auto index = static_cast<std::uint32_t>(reason);
  return index < sizeof k_reasons / sizeof k_reasons[0] ? &k_reasons[index] : nullptr;
}

int digit_value(char c, unsigned base) noexcept {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (base == 16 && c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (base == 16 && c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// Set and not empty: an empty variable counts as unset, as in the certified build (DESIGN §4.1).
bool given(const std::optional<std::string_view>& value) noexcept {
  return value.has_value() && !value->empty();
}

/// Parses an optional profile variable into `out`; false when it is given but malformed.
bool read_optional(const std::optional<std::string_view>& text, std::uint64_t& out) noexcept {
  if (!given(text))
    return true;
  const ParsedNumber number = parse_unsigned(*text);
  if (number.ok())
    out = number.value;
  return number.ok();
}

std::string_view trim_blanks(std::string_view s) noexcept {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && blank(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && blank(s.back()))
    s.remove_suffix(1);
  return s;
}

std::uint32_t big_endian_at(const unsigned char* p) noexcept {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

} // namespace

const char* reason_name(Reason reason) noexcept {
  const ReasonText* text = reason_text(reason);
  return text != nullptr ? text->name : "unknown";
}

const char* reason_description(Reason reason) noexcept {
  const ReasonText* text = reason_text(reason);
  return text != nullptr ? text->description : "unknown reason";
}

ParsedNumber parse_unsigned(std::string_view text) noexcept {
  ParsedNumber result;
  if (text.empty())
    return result; // NumberError::empty
  unsigned base = 10;
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  result.error = NumberError::invalid_character;
  if (text.empty()) // "0x" with no digits
    return result;
  // "01009": C's strtoull(…, 0), which the certified build uses, reads it as octal. Neither
  // reading is safe to guess, so a leading zero is refused and the shim stays inert.
  if (base == 10 && text.size() > 1 && text[0] == '0')
    return result;
  std::uint64_t value = 0;
  for (const char c : text) {
    const int d = digit_value(c, base);
    if (d < 0)
      return result;
    if (value > (UINT64_MAX - static_cast<std::uint64_t>(d)) / base) {
      result.error = NumberError::overflow;
      return result;
    }
    value = value * base + static_cast<std::uint64_t>(d);
  }
  result.error = NumberError::none;
  result.value = value;
  return result;
}

bool kill_switch_set(const Environment& env) noexcept {
  return env.disable.has_value() && *env.disable == "1";
}

ConfigResult parse_config(const Environment& env) noexcept {
  ConfigResult result;
  if (!given(env.apple_family_max))
    return result; // Reason::apple_family_max_unset
  const ParsedNumber ceiling = parse_unsigned(*env.apple_family_max);
  if (!ceiling.ok()) {
    result.reason = Reason::apple_family_max_malformed;
    return result;
  }
  if (ceiling.value < k_apple_family_first || ceiling.value > k_apple_family_ceiling_limit) {
    result.reason = Reason::apple_family_max_out_of_range;
    return result;
  }
  result.profile.apple_family_max = ceiling.value;
  std::uint64_t working_set = 0;
  if (!read_optional(env.max_threadgroup_memory, result.profile.max_threadgroup_memory)) {
    result.reason = Reason::max_threadgroup_memory_malformed;
  } else if (!read_optional(env.recommended_working_set, working_set)) {
    result.reason = Reason::working_set_size_malformed;
  } else {
    if (given(env.recommended_working_set))
      result.profile.recommended_working_set = working_set;
    result.reason = Reason::active;
  }
  return result;
}

bool guard_lists(std::string_view guard_text, std::string_view executable_path) noexcept {
  if (executable_path.empty() || executable_path.front() != '/')
    return false;
  while (!guard_text.empty()) {
    const std::size_t end = guard_text.find('\n');
    const std::string_view entry = trim_blanks(guard_text.substr(0, end));
    guard_text.remove_prefix(end == std::string_view::npos ? guard_text.size() : end + 1);
    if (entry == executable_path) // an absolute path: comments and relative entries never match
      return true;
  }
  return false;
}

ConfigResult decide(const ActivationInput& input) noexcept {
  ConfigResult result;
  if (kill_switch_set(input.env)) {
    result.reason = Reason::disabled;
    return result;
  }
  result = parse_config(input.env);
  if (result.reason != Reason::active || !input.env.enablement.has_value())
    return result;
  if (!input.guard_text.has_value()) {
    result.reason = Reason::enablement_unreadable;
  } else if (!input.executable_path.has_value() || input.executable_path->empty()) {
    result.reason = Reason::executable_unresolved;
  } else if (!guard_lists(*input.guard_text, *input.executable_path)) {
    result.reason = Reason::executable_not_enabled;
  }
  return result;
}

bool carries_arm64_and_arm64e(const unsigned char* bytes, std::size_t size) noexcept {
  constexpr std::uint32_t k_fat_magic = 0xcafebabe;
  constexpr std::uint32_t k_fat_magic_64 = 0xcafebabf;
  constexpr std::uint32_t k_cpu_type_arm64 = 0x0100000c;   // CPU_TYPE_ARM | CPU_ARCH_ABI64
  constexpr std::uint32_t k_cpu_subtype_mask = 0xff000000; // capability bits (arm64e's ptrauth)
  constexpr std::uint32_t k_cpu_subtype_arm64e = 2;
  if (bytes == nullptr || size < 8)
    return false;
  const std::uint32_t magic = big_endian_at(bytes);
  if (magic != k_fat_magic && magic != k_fat_magic_64)
    return false;
  // fat_arch: cputype, cpusubtype, offset, size, align; fat_arch_64: 64-bit offset and size,
  // reserved
  const std::size_t entry = magic == k_fat_magic ? 20 : 32;
  const std::uint32_t count = big_endian_at(bytes + 4);
  bool arm64 = false;
  bool arm64e = false;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::size_t at = 8 + static_cast<std::size_t>(i) * entry;
    if (at + 8 > size)
      return false; // a header cut short proves nothing
    if (big_endian_at(bytes + at) != k_cpu_type_arm64)
      continue;
    const std::uint32_t subtype = big_endian_at(bytes + at + 4) & ~k_cpu_subtype_mask;
    (subtype == k_cpu_subtype_arm64e ? arm64e : arm64) = true;
  }
  return arm64 && arm64e;
}

} // namespace lume_unlock::policy

#pragma once
// The shim's policy (DESIGN §4.1): the environment parsed into a profile, the enablement guard,
// the activation decision and the answers. Pure C++17: no I/O, nothing allocated or thrown.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace lume_unlock::policy {

// The numeric values are part of the C interface (c_api.h) and of lume_unlock_shim_state();
// append only.
enum class Reason : std::uint32_t {
  active = 0,
  disabled = 1,                         // LUME_UNLOCK_DISABLE=1
  apple_family_max_unset = 2,           // LUME_METAL_APPLE_FAMILY_MAX missing
  apple_family_max_malformed = 3,       // not a whole decimal/0x-hex number
  apple_family_max_out_of_range = 4,    // outside 1001..1999
  max_threadgroup_memory_malformed = 5, // LUME_METAL_MAX_THREADGROUP_MEMORY
  working_set_size_malformed = 6,       // LUME_METAL_RECOMMENDED_WORKING_SET_SIZE
  enablement_unreadable = 7,            // LUME_UNLOCK_ENABLEMENT names a file we cannot read
  executable_unresolved = 8,            // this process's executable path is unknown
  executable_not_enabled = 9,           // the guard file does not list this executable
  private_init_missing = 10,            // no -[_MTLDevice initGPUFamilySupport] to swap
  device_hooks_incomplete = 11,         // the device's class lacks a method the hooks replace
};

/// Stable snake_case name ("apple_family_max_out_of_range"); "unknown" for values out of range.
const char* reason_name(Reason reason) noexcept;
/// One lower-case sentence for people ("LUME_METAL_APPLE_FAMILY_MAX must be 1001..1999").
const char* reason_description(Reason reason) noexcept;

enum class NumberError { none, empty, invalid_character, overflow };

struct ParsedNumber {
  NumberError error = NumberError::empty;
  std::uint64_t value = 0;
  bool ok() const { return error == NumberError::none; }
};

/// Decimal ("1009") or 0x/0X hexadecimal ("0x3F1"), the whole string: signs, spaces, a bare "0x",
/// a decimal with a leading zero ("01009", octal to C) or trailing characters are
/// `invalid_character`, "" is `empty`, above 2^64-1 is `overflow`.
ParsedNumber parse_unsigned(std::string_view text) noexcept;

inline constexpr std::uint64_t k_apple_family_first = 1001; // MTLGPUFamilyApple1
inline constexpr std::uint64_t k_apple_family_ceiling_limit = 1999;
inline constexpr std::uint64_t k_default_max_threadgroup_memory = 65536;

/// The variables as the process sees them; nullopt = unset. An empty profile variable counts as
/// unset; an empty LUME_UNLOCK_ENABLEMENT does not (it names no readable file, so the shim stays
/// inert rather than unlocking every process).
struct Environment {
  std::optional<std::string_view> apple_family_max;       // LUME_METAL_APPLE_FAMILY_MAX
  std::optional<std::string_view> max_threadgroup_memory; // LUME_METAL_MAX_THREADGROUP_MEMORY
  std::optional<std::string_view>
      recommended_working_set;                // LUME_METAL_RECOMMENDED_WORKING_SET_SIZE
  std::optional<std::string_view> enablement; // LUME_UNLOCK_ENABLEMENT
  std::optional<std::string_view> disable;    // LUME_UNLOCK_DISABLE
};

/// What an active shim answers.
struct Profile {
  std::uint64_t apple_family_max = 0; // supportsFamily: true for 1001..apple_family_max
  std::uint64_t max_threadgroup_memory = k_default_max_threadgroup_memory; // raised to at least
  std::optional<std::uint64_t> recommended_working_set; // raised to at least, only when set
  bool operator==(const Profile& other) const {
    return apple_family_max == other.apple_family_max &&
           max_threadgroup_memory == other.max_threadgroup_memory &&
           recommended_working_set == other.recommended_working_set;
  }
};

struct ConfigResult {
  Reason reason = Reason::apple_family_max_unset; // Reason::active when `profile` is usable
  Profile profile;
};

/// True only for exactly "1" (the kill switch).
bool kill_switch_set(const Environment& env) noexcept;

/// Parses the three profile variables (not the kill switch or the guard). The first problem found,
/// in table order, is the reason; the profile is meaningful only when the reason is `active`.
ConfigResult parse_config(const Environment& env) noexcept;

/// True when `guard_text` lists `executable_path`: one absolute path per line; '#' comments, blank
/// lines, CRLF and blanks around a path tolerated. A relative entry never matches, and neither
/// does an empty or relative `executable_path`.
bool guard_lists(std::string_view guard_text, std::string_view executable_path) noexcept;

/// What the caller learned from the file system; the policy does no I/O itself.
struct ActivationInput {
  Environment env;
  // The file named by env.enablement; nullopt when unreadable. Ignored when enablement is unset.
  std::optional<std::string_view> guard_text;
  // This process's resolved executable path; nullopt when it could not be resolved.
  std::optional<std::string_view> executable_path;
};

/// Whether the shim activates: LUME_UNLOCK_DISABLE=1 wins over everything, then the configuration
/// (parse_config), then the guard (only when LUME_UNLOCK_ENABLEMENT is set).
ConfigResult decide(const ActivationInput& input) noexcept;

// The answers, on every hooked Metal query: no allocation, no branches beyond the rule itself.

/// `supportsFamily:` is forced true only for Apple families 1001..apple_family_max; every other
/// code (Mac, Common, MacCatalyst, Metal, Apple above the ceiling, unknown) gets the device's own.
inline bool family_forced_true(const Profile& profile, std::uint64_t family) noexcept {
  return family >= k_apple_family_first && family <= profile.apple_family_max;
}

/// A limit is raised to at least `configured`, never lowered.
inline std::uint64_t raise_limit(std::uint64_t original, std::uint64_t configured) noexcept {
  return original < configured ? configured : original;
}

/// True when `bytes` (a file's start) is a fat Mach-O (FAT_MAGIC or FAT_MAGIC_64) listing both an
/// arm64 and an arm64e slice: the shim asks it of its own file to choose the rule for children
/// (DESIGN §4.2). False for a thin file, another format, or a header cut short. Constants from
/// Apple's <mach-o/fat.h> and <mach/machine.h> (docs/sources.md).
bool carries_arm64_and_arm64e(const unsigned char* bytes, std::size_t size) noexcept;

} // namespace lume_unlock::policy

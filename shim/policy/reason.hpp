#pragma once
// Why the shim is active or stays inert: explicit values for the probe and the LUME_UNLOCK_LOG
// line.
#include <cstdint>

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

} // namespace lume_unlock::policy

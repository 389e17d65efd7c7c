#include "policy/reason.hpp"

namespace lume_unlock::policy {

const char* reason_name(Reason reason) noexcept {
  switch (reason) {
  case Reason::active:
    return "active";
  case Reason::disabled:
    return "disabled";
  case Reason::apple_family_max_unset:
    return "apple_family_max_unset";
  case Reason::apple_family_max_malformed:
    return "apple_family_max_malformed";
  case Reason::apple_family_max_out_of_range:
    return "apple_family_max_out_of_range";
  case Reason::max_threadgroup_memory_malformed:
    return "max_threadgroup_memory_malformed";
  case Reason::working_set_size_malformed:
    return "working_set_size_malformed";
  case Reason::enablement_unreadable:
    return "enablement_unreadable";
  case Reason::executable_unresolved:
    return "executable_unresolved";
  case Reason::executable_not_enabled:
    return "executable_not_enabled";
  case Reason::private_init_missing:
    return "private_init_missing";
  case Reason::device_hooks_incomplete:
    return "device_hooks_incomplete";
  }
  return "unknown";
}

const char* reason_description(Reason reason) noexcept {
  switch (reason) {
  case Reason::active:
    return "active";
  case Reason::disabled:
    return "LUME_UNLOCK_DISABLE=1 is set";
  case Reason::apple_family_max_unset:
    return "LUME_METAL_APPLE_FAMILY_MAX is not set";
  case Reason::apple_family_max_malformed:
    return "LUME_METAL_APPLE_FAMILY_MAX is not a decimal or 0x-hex number";
  case Reason::apple_family_max_out_of_range:
    return "LUME_METAL_APPLE_FAMILY_MAX must be 1001..1999";
  case Reason::max_threadgroup_memory_malformed:
    return "LUME_METAL_MAX_THREADGROUP_MEMORY is not a decimal or 0x-hex number";
  case Reason::working_set_size_malformed:
    return "LUME_METAL_RECOMMENDED_WORKING_SET_SIZE is not a decimal or 0x-hex number";
  case Reason::enablement_unreadable:
    return "the file named by LUME_UNLOCK_ENABLEMENT cannot be read";
  case Reason::executable_unresolved:
    return "this process's executable path cannot be resolved";
  case Reason::executable_not_enabled:
    return "this executable is not listed in the LUME_UNLOCK_ENABLEMENT file";
  case Reason::private_init_missing:
    return "Metal has no -[_MTLDevice initGPUFamilySupport] on this macOS; the device stays stock";
  case Reason::device_hooks_incomplete:
    return "the device's class lacks a capability method the shim replaces; the device stays "
           "stock";
  }
  return "unknown reason";
}

} // namespace lume_unlock::policy

#include "macho/cpu.hpp"

#include <cstdio>

namespace lume_unlock::macho {

std::string arch_name(std::uint32_t cputype, std::uint32_t cpusubtype) {
  const std::uint32_t subtype = cpusubtype & ~k_cpu_subtype_capability_mask;
  switch (cputype) {
  case k_cpu_type_arm64:
    return subtype == k_cpu_subtype_arm64e ? "arm64e" : "arm64";
  case k_cpu_type_x86_64:
    return subtype == k_cpu_subtype_x86_64_h ? "x86_64h" : "x86_64";
  case k_cpu_type_x86:
    return "i386";
  case k_cpu_type_arm:
    return "arm";
  default:
    break;
  }
  char text[48];
  std::snprintf(text, sizeof text, "cputype 0x%x/cpusubtype 0x%x", cputype, cpusubtype);
  return text;
}

} // namespace lume_unlock::macho

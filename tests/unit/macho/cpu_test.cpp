#include "macho/macho.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::macho {
namespace {

TEST(MachoCpu, NamesSlicesLikeLipoIgnoringTheCapabilityBits) {
  EXPECT_EQ(arch_name(k_cpu_type_arm64, 0), "arm64");
  EXPECT_EQ(arch_name(k_cpu_type_arm64, 1), "arm64"); // CPU_SUBTYPE_ARM64_V8
  EXPECT_EQ(arch_name(k_cpu_type_arm64, 2), "arm64e");
  EXPECT_EQ(arch_name(k_cpu_type_arm64, 0x80000002), "arm64e"); // the pointer-auth ABI bit
  EXPECT_EQ(arch_name(k_cpu_type_arm64, 0x80000000), "arm64");
  EXPECT_EQ(arch_name(k_cpu_type_x86_64, 0x80000003), "x86_64"); // CPU_SUBTYPE_LIB64
  EXPECT_EQ(arch_name(k_cpu_type_x86_64, 8), "x86_64h");
  EXPECT_EQ(arch_name(k_cpu_type_x86, 3), "i386");
  EXPECT_EQ(arch_name(18, 0), "cputype 0x12/cpusubtype 0x0");
}

} // namespace
} // namespace lume_unlock::macho

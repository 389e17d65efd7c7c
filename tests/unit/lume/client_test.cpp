#include "lume/client.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::lume {
namespace {

TEST(PercentEncode, KeepsOnlyUnreservedCharacters) {
  EXPECT_EQ(percent_encode("/Volumes/ssd/lume"), "%2FVolumes%2Fssd%2Flume");
  EXPECT_EQ(percent_encode("home"), "home");
  EXPECT_EQ(percent_encode("a b+c~d_e.f-g"), "a%20b%2Bc~d_e.f-g");
  EXPECT_EQ(percent_encode("\xc3\xa9"), "%C3%A9");
}

TEST(VmNotFound, RecognisesOnlyLumesNotFoundMessage) {
  EXPECT_TRUE(is_vm_not_found(Error(ErrorCategory::lume_api, "status of VM 'x'",
                                    "Lume answered HTTP 400: Virtual machine not found: x")));
  EXPECT_FALSE(is_vm_not_found(Error(ErrorCategory::lume_api, "status of VM 'x'",
                                     "Lume answered HTTP 400: Virtual machine not running: x")));
  EXPECT_FALSE(is_vm_not_found(Error(ErrorCategory::usage, "x",
                                     "Lume answered HTTP 400: Virtual machine not found: x")));
}

TEST(LumeClient, TrailingSlashesOfTheBaseUrlAreDropped) {
  ClientOptions o;
  o.base_url = "http://127.0.0.1:7777//";
  EXPECT_EQ(LumeClient(o).options().base_url, "http://127.0.0.1:7777");
}

} // namespace
} // namespace lume_unlock::lume

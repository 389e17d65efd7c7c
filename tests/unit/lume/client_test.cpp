#include "lume/client.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::lume {
namespace {

TEST(VmNotFound, RecognisesOnlyLumesNotFoundMessage) {
  EXPECT_TRUE(is_vm_not_found(Error(ErrorCategory::lume_api,
                                    "status of VM 'x'",
                                    "Lume answered HTTP 400: Virtual machine not found: x")));
  EXPECT_FALSE(is_vm_not_found(Error(ErrorCategory::lume_api,
                                     "status of VM 'x'",
                                     "Lume answered HTTP 400: Virtual machine not running: x")));
  EXPECT_FALSE(is_vm_not_found(
      Error(ErrorCategory::usage, "x", "Lume answered HTTP 400: Virtual machine not found: x")));
}

TEST(LumeClient, TrailingSlashesOfTheBaseUrlAreDropped) {
  ClientOptions o;
  o.base_url = "http://127.0.0.1:7777//";
  EXPECT_EQ(LumeClient(o).options().base_url, "http://127.0.0.1:7777");
}

TEST(LumeClient, NeverSendsAQueryOnALiteralTerminatedRoute) {
  ClientOptions o;
  o.base_url = "http://127.0.0.1:1"; // nothing listens; the guard answers first
  LumeClient client(o);
  LumeClient::Call call{"list of VMs",
                        "GET",
                        "/lume/vms?storage=x",
                        std::nullopt,
                        {200},
                        std::chrono::milliseconds(1000)};
  auto r = client.call(call);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "list of VMs: internal error: a query string on GET /lume/vms "
            "would reach no route in Lume");
  call.path = "/lume/vms/dev/run?x=1";
  EXPECT_FALSE(client.call(call).ok());
  EXPECT_EQ(client.request_count(), 0u);
}

} // namespace
} // namespace lume_unlock::lume

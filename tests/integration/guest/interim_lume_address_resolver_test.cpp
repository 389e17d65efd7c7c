// The interim Lume address lookup against a minimal GET /lume/vms/<name> stand-in.
#include "guest/interim_lume_address_resolver.hpp"
#include "support/process.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <thread>

namespace lume_unlock::guest {
namespace {

/// Serves a VM that boots: the first `boot_polls` answers are running without an address.
class BootingLume {
public:
  explicit BootingLume(int boot_polls) : m_port(test::free_loopback_port()) {
    m_server.Get(R"(/lume/vms/([^/]+))", [this, boot_polls](const httplib::Request&, httplib::Response& response) {
      const bool booted = ++m_requests > boot_polls;
      nlohmann::json body = {{"name", "vm1"}, {"status", "running"},
                             {"ipAddress", booted ? nlohmann::json("192.168.64.9") : nlohmann::json()},
                             {"sshAvailable", booted ? nlohmann::json(true) : nlohmann::json()}};
      response.set_content(body.dump(), "application/json");
    });
    m_thread = std::thread([this] { m_server.listen("127.0.0.1", m_port); });
    test::wait_for_tcp(m_port, std::chrono::seconds(5));
  }
  ~BootingLume() {
    m_server.stop();
    m_thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  int requests() const { return m_requests; }

private:
  int m_port;
  std::atomic<int> m_requests{0};
  httplib::Server m_server;
  std::thread m_thread;
};

TEST(InterimLumeAddressResolver, WaitsUntilTheGuestHasAnAddressAndSsh) {
  BootingLume lume(3);
  InterimLumeAddressResolver resolver(lume.url() + "/", std::chrono::seconds(5), std::chrono::milliseconds(10));
  auto host = resolver.resolve("vm1");
  ASSERT_TRUE(host.ok()) << host.error().message();
  EXPECT_EQ(host.value(), "192.168.64.9");
  EXPECT_EQ(lume.requests(), 4);
}

TEST(InterimLumeAddressResolver, GivesUpAfterTheDeadline) {
  BootingLume lume(1000000);
  InterimLumeAddressResolver resolver(lume.url(), std::chrono::milliseconds(1000), std::chrono::milliseconds(50));
  auto host = resolver.resolve("vm1");
  ASSERT_FALSE(host.ok());
  EXPECT_EQ(host.error().category(), ErrorCategory::guest);
  EXPECT_EQ(host.error().message(),
            "finding the address of VM 'vm1': VM 'vm1' has no IP address yet after waiting 1 s");
  EXPECT_GE(lume.requests(), 10);
}

TEST(InterimLumeAddressResolver, UnreachableLumeIsALumeApiError) {
  InterimLumeAddressResolver resolver("http://127.0.0.1:" + std::to_string(test::free_loopback_port()));
  auto host = resolver.resolve("vm1");
  ASSERT_FALSE(host.ok());
  EXPECT_EQ(host.error().category(), ErrorCategory::lume_api);
  EXPECT_EQ(host.error().hint(), "start Lume ('lume serve') or point --lume-url at it");
}

TEST(InterimLumeAddressResolver, NamesOutsideLumesAlphabetAreRejectedBeforeAnyRequest) {
  InterimLumeAddressResolver resolver("http://127.0.0.1:1");
  auto host = resolver.resolve("a/../b");
  ASSERT_FALSE(host.ok());
  EXPECT_EQ(host.error().category(), ErrorCategory::usage);
  EXPECT_EQ(host.error().message(),
            "VM name 'a/../b': Lume names use only letters, digits, '.', '_' and '-'");
}

} // namespace
} // namespace lume_unlock::guest

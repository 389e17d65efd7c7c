#include "guest/ssh_session.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::guest {
namespace {

TEST(VmKeyPaths, LiveUnderTheVmsDirectoryOfTheState) {
  auto paths = vm_key_paths("/home/u/.lume-unlock", "demo-vm");
  ASSERT_TRUE(paths.ok());
  EXPECT_EQ(paths.value().directory, "/home/u/.lume-unlock/vms/demo-vm");
  EXPECT_EQ(paths.value().known_host, "/home/u/.lume-unlock/vms/demo-vm/known_host");
  EXPECT_EQ(paths.value().private_key, "/home/u/.lume-unlock/vms/demo-vm/ssh_ed25519");
  EXPECT_EQ(paths.value().public_key, "/home/u/.lume-unlock/vms/demo-vm/ssh_ed25519.pub");
}

TEST(VmKeyPaths, NamesThatEscapeTheStateDirectoryAreRejected) {
  for (const char* name : {"", ".", "..", "a/b", "../x"}) {
    auto paths = vm_key_paths("/s", name);
    ASSERT_FALSE(paths.ok()) << name;
    EXPECT_EQ(paths.error().category(), ErrorCategory::usage);
    EXPECT_EQ(paths.error().message(),
              "VM name '" + std::string(name) +
                  "': not usable as a directory name under the state "
                  "directory");
  }
}

TEST(SshSession, BadVmNameFailsBeforeConnecting) {
  SshSessionOptions options;
  options.vm = "../etc";
  options.host = "127.0.0.1";
  options.state_dir = "/nonexistent";
  auto session = SshSession::connect(options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.error().category(), ErrorCategory::usage);
}

} // namespace
} // namespace lume_unlock::guest

#include "cli/commands.hpp"
#include "guest/ssh_session.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <cstdlib>

namespace lume_unlock::guest {
namespace {

ConnectionOptions parse(std::vector<std::string> args) {
  CLI::App app("test");
  ConnectionOptions options;
  cli::add_connection_options(app, options);
  std::reverse(args.begin(), args.end()); // CLI11 takes a reversed vector
  app.parse(args);
  return options;
}

TEST(ConnectionOptions, DefaultsFollowTheDesign) {
  auto options = parse({});
  EXPECT_EQ(options.user, "lume");
  EXPECT_EQ(options.port, 22);
  EXPECT_EQ(options.password_env, "LUME_UNLOCK_GUEST_PASSWORD");
  EXPECT_FALSE(options.accept_new_host_key);
}

TEST(ConnectionOptions, FlagsOverrideTheDefaults) {
  auto options = parse({"--ssh-user",
                        "admin",
                        "--ssh-port",
                        "2222",
                        "--ssh-password-env",
                        "MY_PW",
                        "--ssh-accept-new-host-key"});
  EXPECT_EQ(options.user, "admin");
  EXPECT_EQ(options.port, 2222);
  EXPECT_EQ(options.password_env, "MY_PW");
  EXPECT_TRUE(options.accept_new_host_key);
}

TEST(ConnectionOptions, PortOutOfRangeIsRejected) {
  EXPECT_THROW(parse({"--ssh-port", "70000"}), CLI::ValidationError);
}

TEST(ConnectionOptions, PasswordComesFromTheNamedVariable) {
  ConnectionOptions options;
  options.password_env = "LUME_UNLOCK_TEST_PW_SET";
  setenv("LUME_UNLOCK_TEST_PW_SET", "s3cret", 1);
  auto session = session_options(options, "vm1", "10.0.0.2", "/state");
  unsetenv("LUME_UNLOCK_TEST_PW_SET");
  EXPECT_EQ(session.password, "s3cret");
  EXPECT_TRUE(session.password_from_environment);
  EXPECT_EQ(session.vm, "vm1");
  EXPECT_EQ(session.host, "10.0.0.2");
  EXPECT_EQ(session.port, 22);
  EXPECT_EQ(session.user, "lume");
  EXPECT_EQ(session.state_dir, "/state");
}

TEST(ConnectionOptions, UnsetOrEmptyVariableMeansTheImageDefault) {
  ConnectionOptions options;
  options.password_env = "LUME_UNLOCK_TEST_PW_UNSET";
  unsetenv("LUME_UNLOCK_TEST_PW_UNSET");
  auto unset = session_options(options, "vm1", "h", "/s");
  EXPECT_EQ(unset.password, "lume");
  EXPECT_FALSE(unset.password_from_environment);
  setenv("LUME_UNLOCK_TEST_PW_UNSET", "", 1);
  auto empty = session_options(options, "vm1", "h", "/s");
  unsetenv("LUME_UNLOCK_TEST_PW_UNSET");
  EXPECT_EQ(empty.password, "lume");
}

} // namespace
} // namespace lume_unlock::guest

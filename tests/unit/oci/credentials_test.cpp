#include "oci/registry_client.hpp"
#include "support/file_io.hpp"
#include "support/temp_dir.hpp"
#include "util/encoding.hpp"

#include <gtest/gtest.h>

#include <map>

namespace lume_unlock::oci {
namespace {

EnvironmentReader fake_env(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) {
      return std::nullopt;
    }
    return it->second;
  };
}

TEST(EnvironmentCredentials, GhcrVariablesWinOverGithubOnesForGhcrOnly) {
  EnvironmentCredentials env(fake_env({{"GHCR_USERNAME", "g-user"},
                                       {"GITHUB_USERNAME", "gh-user"},
                                       {"GHCR_TOKEN", "g-token"},
                                       {"GITHUB_TOKEN", "gh-token"}}));
  auto found = env.lookup("ghcr.io");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->username, "g-user");
  EXPECT_EQ(found->secret, "g-token");
  // A GitHub token is never offered to another registry.
  EXPECT_EQ(env.lookup("127.0.0.1:5000"), std::nullopt);
}

TEST(EnvironmentCredentials, FallsBackToGithubVariablesAndNeedsBoth) {
  auto found = EnvironmentCredentials(fake_env({{"GITHUB_USERNAME", "u"}, {"GITHUB_TOKEN", "t"}}))
                   .lookup("ghcr.io");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->username, "u");
  EXPECT_EQ(EnvironmentCredentials(fake_env({{"GITHUB_USERNAME", "u"}})).lookup("ghcr.io"),
            std::nullopt);
  EXPECT_EQ(EnvironmentCredentials(fake_env({{"GHCR_TOKEN", "t"}})).lookup("ghcr.io"),
            std::nullopt);
  EXPECT_EQ(EnvironmentCredentials(fake_env({{"GHCR_USERNAME", ""}, {"GHCR_TOKEN", "t"}}))
                .lookup("ghcr.io"),
            std::nullopt);
}

TEST(DockerConfigCredentials, ReadsAuthAndUsernamePasswordEntries) {
  const std::string text = "{\"auths\":{"
                           "\"https://ghcr.io/v1/\":{\"auth\":\"" +
                           util::base64_encode("me:s3cr:et") +
                           "\"},"
                           "\"127.0.0.1:5000\":{\"username\":\"u\",\"password\":\"p\"},"
                           "\"helper.example\":{}},\"credsStore\":\"desktop\"}";
  auto config = DockerConfigCredentials::parse(text, "/home/x/.docker/config.json");
  ASSERT_TRUE(config.ok()) << config.error().message();
  auto ghcr = config.value().lookup("ghcr.io");
  ASSERT_TRUE(ghcr.has_value());
  EXPECT_EQ(ghcr->username, "me");
  EXPECT_EQ(ghcr->secret, "s3cr:et");
  EXPECT_EQ(config.value().lookup("127.0.0.1:5000")->secret, "p");
  EXPECT_EQ(config.value().lookup("helper.example"), std::nullopt);
  EXPECT_EQ(config.value().lookup("docker.io"), std::nullopt);
}

TEST(DockerConfigCredentials, RejectsInvalidFilesWithoutPrintingSecrets) {
  auto not_json = DockerConfigCredentials::parse("{", "/c.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.error().message(), "invalid Docker config '/c.json': /: not valid JSON");
  auto bad_auth =
      DockerConfigCredentials::parse("{\"auths\":{\"h\":{\"auth\":\"c2VjcmV0\"}}}", "/c.json");
  ASSERT_FALSE(bad_auth.ok());
  EXPECT_EQ(bad_auth.error().message(),
            "invalid Docker config '/c.json': /auths/h/auth: not base64 of 'user:secret'");
  EXPECT_EQ(bad_auth.error().message().find("secret'"), bad_auth.error().message().find("secret'"));
  EXPECT_EQ(bad_auth.error().message().find("c2VjcmV0"), std::string::npos);
}

TEST(DockerConfigCredentials, MissingFileMeansNoCredentials) {
  auto config = DockerConfigCredentials::load(fake_env({{"DOCKER_CONFIG", "/nonexistent/dir"}}));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config.value().lookup("ghcr.io"), std::nullopt);
}

TEST(DockerConfigCredentials, ACredentialFileOthersCanReadIsRefused) {
  test::TempDir dir;
  const std::string path = dir / "config.json";
  test::write_file(path, "{\"auths\":{\"r.io\":{\"username\":\"u\",\"password\":\"p\"}}}", 0644);
  auto config = DockerConfigCredentials::load(fake_env({{"DOCKER_CONFIG", dir.path()}}));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().category(), ErrorCategory::usage);
  EXPECT_EQ(config.error().hint(), "run: chmod 600 '" + path + "'");
  EXPECT_EQ(config.error().message().find("\"p\""), std::string::npos);

  test::write_file(path, "{\"auths\":{\"r.io\":{\"username\":\"u\",\"password\":\"p\"}}}", 0600);
  config = DockerConfigCredentials::load(fake_env({{"DOCKER_CONFIG", dir.path()}}));
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config.value().lookup("r.io")->username, "u");

  // Without credentials in it, a readable config (credsStore only, say) holds nothing to leak.
  test::write_file(path, "{}", 0644);
  EXPECT_TRUE(DockerConfigCredentials::load(fake_env({{"DOCKER_CONFIG", dir.path()}})).ok());
}

TEST(ChainedCredentials, FirstSourceThatAnswersWins) {
  auto env = std::make_shared<EnvironmentCredentials>(
      fake_env({{"GHCR_USERNAME", "e"}, {"GHCR_TOKEN", "t"}}));
  auto docker = std::make_shared<DockerConfigCredentials>(
      DockerConfigCredentials::parse(
          "{\"auths\":{\"ghcr.io\":{\"username\":\"d\",\"password\":\"p\"},"
          "\"r.io\":{\"username\":\"r\",\"password\":\"p\"}}}",
          "c")
          .value());
  ChainedCredentials chain({env, docker});
  EXPECT_EQ(chain.lookup("ghcr.io")->username, "e");
  EXPECT_EQ(chain.lookup("r.io")->username, "r");
  EXPECT_EQ(chain.lookup("x.io"), std::nullopt);
}

} // namespace
} // namespace lume_unlock::oci

#include "support/file_io.hpp"
#include "support/temp_dir.hpp"
#include "util/key_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>

namespace lume_unlock::util {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

/// Sets LUME_UNLOCK_KEY_PASSPHRASE for one test and restores the absence afterwards.
struct PassphraseEnvironment {
  explicit PassphraseEnvironment(const char* value) { setenv(key_passphrase_variable, value, 1); }
  ~PassphraseEnvironment() { unsetenv(key_passphrase_variable); }
};

TEST(KeyFile, GenerateWritesAPrivateKeyOnlyItsOwnerReadsAndAPublicKey) {
  test::TempDir dir;
  const KeyPairFiles files = write_key_pair(dir / "signing", std::nullopt).value_or_throw();
  EXPECT_EQ(files.private_key, dir / "signing.key");
  EXPECT_EQ(files.public_key, dir / "signing.pub");
  EXPECT_EQ(test::mode_of(files.private_key), 0600u);
  EXPECT_EQ(test::mode_of(files.public_key), 0644u);
  const EcdsaPrivateKey key = read_private_key_file(files.private_key).value_or_throw();
  const EcdsaPublicKey pub = read_public_key_file(files.public_key).value_or_throw();
  EXPECT_EQ(pub.fingerprint(), files.fingerprint);
  EXPECT_EQ(key.public_key().fingerprint(), files.fingerprint);
}

TEST(KeyFile, AnExistingKeyIsNeverOverwritten) {
  test::TempDir dir;
  test::write_file(dir / "signing.pub", "keep me");
  auto again = write_key_pair(dir / "signing", std::nullopt);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().category(), ErrorCategory::usage);
  EXPECT_THAT(again.error().message(), HasSubstr("already exists"));
  EXPECT_EQ(test::slurp(dir / "signing.pub"), "keep me");
  EXPECT_EQ(test::mode_of(dir / "signing.key"), 0u); // not written either
}

TEST(KeyFile, APassphraseFromTheEnvironmentEncryptsAndDecrypts) {
  test::TempDir dir;
  PassphraseEnvironment environment("s3cret words");
  const KeyPairFiles files =
      write_key_pair(dir / "enc", key_passphrase_from_environment()).value_or_throw();
  EXPECT_THAT(test::slurp(files.private_key), HasSubstr("ENCRYPTED PRIVATE KEY"));
  EXPECT_THAT(test::slurp(files.private_key), Not(HasSubstr("s3cret")));
  EXPECT_TRUE(read_private_key_file(files.private_key).ok());
  unsetenv(key_passphrase_variable);
  auto locked = read_private_key_file(files.private_key);
  ASSERT_FALSE(locked.ok());
  EXPECT_THAT(locked.error().message(), HasSubstr("no passphrase"));
}

TEST(KeyFile, AKeyOthersMayReadIsRefusedWithTheChmodToRun) {
  test::TempDir dir;
  const KeyPairFiles files = write_key_pair(dir / "loose", std::nullopt).value_or_throw();
  chmod(files.private_key.c_str(), 0644);
  auto refused = read_private_key_file(files.private_key);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().category(), ErrorCategory::usage);
  EXPECT_THAT(refused.error().hint(), HasSubstr("chmod 600"));
}

} // namespace
} // namespace lume_unlock::util

#include "support/file_io.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"
#include "util/ecdsa_key.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lume_unlock::util {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

EcdsaPrivateKey fresh_key() {
  return EcdsaPrivateKey::generate().value_or_throw();
}

TEST(EcdsaKey, ASignatureVerifiesWithThePublicKeyAndNotForOtherBytes) {
  const EcdsaPrivateKey key = fresh_key();
  const std::string signature = key.sign("payload bytes").value_or_throw();
  EXPECT_TRUE(key.public_key().verify("payload bytes", signature));
  EXPECT_FALSE(key.public_key().verify("payload bytez", signature));
  EXPECT_FALSE(fresh_key().public_key().verify("payload bytes", signature));
}

TEST(EcdsaKey, SignaturesAreDerSequences) {
  const std::string signature = fresh_key().sign("x").value_or_throw();
  ASSERT_GE(signature.size(), 8u);
  EXPECT_EQ(static_cast<unsigned char>(signature[0]), 0x30); // SEQUENCE
  EXPECT_EQ(static_cast<std::size_t>(static_cast<unsigned char>(signature[1])) + 2,
            signature.size());
}

TEST(EcdsaKey, AMalformedSignatureIsNotValidRatherThanAnError) {
  const EcdsaPrivateKey key = fresh_key();
  EXPECT_FALSE(key.public_key().verify("x", ""));
  EXPECT_FALSE(key.public_key().verify("x", "not DER at all"));
}

TEST(EcdsaKey, PublicPemRoundTripsAndKeepsTheFingerprint) {
  const EcdsaPublicKey original = fresh_key().public_key();
  const std::string pem = original.pem();
  EXPECT_EQ(pem.rfind("-----BEGIN PUBLIC KEY-----\n", 0), 0u);
  const EcdsaPublicKey read = EcdsaPublicKey::from_pem(pem, "test").value_or_throw();
  EXPECT_EQ(read.der(), original.der());
  EXPECT_EQ(read.fingerprint(), original.fingerprint());
  EXPECT_EQ(read.fingerprint().rfind("sha256:", 0), 0u);
  EXPECT_EQ(read.fingerprint().size(), 7u + 64u);
  // P-256 SubjectPublicKeyInfo: 26 bytes of algorithm header + 65-byte uncompressed point.
  EXPECT_EQ(read.der().size(), 91u);
}

TEST(EcdsaKey, PlainPrivatePemIsPkcs8AndRoundTrips) {
  const EcdsaPrivateKey key = fresh_key();
  const std::string pem = key.pem(std::nullopt).value_or_throw();
  EXPECT_EQ(pem.rfind("-----BEGIN PRIVATE KEY-----\n", 0), 0u);
  const EcdsaPrivateKey read =
      EcdsaPrivateKey::from_pem(pem, std::nullopt, "test").value_or_throw();
  EXPECT_EQ(read.public_key().der(), key.public_key().der());
}

TEST(EcdsaKey, EncryptedPrivatePemNeedsTheRightPassphrase) {
  const EcdsaPrivateKey key = fresh_key();
  const std::string pem = key.pem(std::string("correct horse")).value_or_throw();
  EXPECT_EQ(pem.rfind("-----BEGIN ENCRYPTED PRIVATE KEY-----\n", 0), 0u);

  auto without = EcdsaPrivateKey::from_pem(pem, std::nullopt, "'k.key'");
  ASSERT_FALSE(without.ok());
  EXPECT_EQ(without.error().category(), ErrorCategory::usage);
  EXPECT_THAT(without.error().message(), HasSubstr("encrypted and no passphrase"));
  EXPECT_THAT(without.error().hint(), HasSubstr("LUME_UNLOCK_KEY_PASSPHRASE"));

  auto wrong = EcdsaPrivateKey::from_pem(pem, std::string("wrong horse"), "'k.key'");
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.error().message(), HasSubstr("passphrase is wrong"));
  EXPECT_THAT(wrong.error().message(), Not(HasSubstr("wrong horse")));

  auto right = EcdsaPrivateKey::from_pem(pem, std::string("correct horse"), "'k.key'");
  ASSERT_TRUE(right.ok()) << right.error().message();
  EXPECT_EQ(right.value().public_key().der(), key.public_key().der());
}

TEST(EcdsaKey, OtherKeyTypesAndGarbageAreRefused) {
  auto garbage = EcdsaPublicKey::from_pem("hello", "'x.pub'");
  ASSERT_FALSE(garbage.ok());
  EXPECT_THAT(garbage.error().message(), HasSubstr("'x.pub'"));
  auto cosign_native = EcdsaPrivateKey::from_pem(
      "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED SIGSTORE PRIVATE "
      "KEY-----\n",
      std::nullopt,
      "'cosign.key'");
  ASSERT_FALSE(cosign_native.ok());
  EXPECT_THAT(cosign_native.error().message(), HasSubstr("cosign's own"));
}

// An independent reader: OpenSSL's command line takes our private key and derives the same
// public key; a P-384 key made by it is refused by us.
TEST(EcdsaKey, TheOpensslCommandLineReadsOurKeysAndWeRefuseItsP384) {
  test::TempDir dir;
  const EcdsaPrivateKey key = fresh_key();
  test::write_file(dir / "k.key", key.pem(std::string("pw")).value_or_throw(), 0600);
  const test::CommandOutput derived = test::run_command(
      {"/usr/bin/openssl", "pkey", "-in", dir / "k.key", "-passin", "env:PW", "-pubout"},
      {{"PW", "pw"}});
  LUME_UNLOCK_REQUIRE(derived.exit_status != 127, "/usr/bin/openssl is not installed");
  ASSERT_EQ(derived.exit_status, 0) << derived.stderr_text;
  EXPECT_EQ(derived.stdout_text, key.public_key().pem());

  const test::CommandOutput p384 = test::run_command(
      {"/usr/bin/openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"});
  ASSERT_EQ(p384.exit_status, 0) << p384.stderr_text;
  auto refused = EcdsaPrivateKey::from_pem(p384.stdout_text, std::nullopt, "'p384.key'");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message(), HasSubstr("not an ECDSA P-256 key"));
}

// Issue 27: sign takes PKCS#8 only; OpenSSL's SEC1 form of the same key is refused with the
// command that converts it, and the converted key signs again.
TEST(EcdsaKey, Sec1PrivateKeysAreRefusedWithTheConversionCommand) {
  test::TempDir dir;
  const EcdsaPrivateKey key = fresh_key();
  test::write_file(dir / "k.key", key.pem(std::nullopt).value_or_throw(), 0600);
  const test::CommandOutput sec1 =
      test::run_command({"/usr/bin/openssl", "ec", "-in", dir / "k.key", "-outform", "PEM"});
  LUME_UNLOCK_REQUIRE(sec1.exit_status != 127, "/usr/bin/openssl is not installed");
  ASSERT_EQ(sec1.exit_status, 0) << sec1.stderr_text;
  ASSERT_THAT(sec1.stdout_text, HasSubstr("-----BEGIN EC PRIVATE KEY-----"));
  auto refused = EcdsaPrivateKey::from_pem(sec1.stdout_text, std::nullopt, "'sec1.key'");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(),
            "private key 'sec1.key': is a 'EC PRIVATE KEY' PEM block; sign takes a PKCS#8 P-256 "
            "key (-----BEGIN PRIVATE KEY----- or -----BEGIN ENCRYPTED PRIVATE KEY-----)");
  EXPECT_EQ(refused.error().hint(),
            "convert it with: openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.p8 (or without "
            "-nocrypt to encrypt it), or create one with: lume-unlock key generate PREFIX");

  test::write_file(dir / "sec1.key", sec1.stdout_text, 0600);
  const test::CommandOutput converted = test::run_command(
      {"/usr/bin/openssl", "pkcs8", "-topk8", "-nocrypt", "-in", dir / "sec1.key"});
  ASSERT_EQ(converted.exit_status, 0) << converted.stderr_text;
  auto accepted = EcdsaPrivateKey::from_pem(converted.stdout_text, std::nullopt, "'k.p8'");
  ASSERT_TRUE(accepted.ok()) << accepted.error().message();
  EXPECT_EQ(accepted.value().public_key().fingerprint(), key.public_key().fingerprint());
}

TEST(EcdsaKey, PemFilesHoldingMoreOrOtherThanOneKeyAreRefused) {
  const std::string pub = fresh_key().public_key().pem();
  const std::string priv = fresh_key().pem(std::nullopt).value_or_throw();
  struct Case {
    std::string pem;
    bool is_private;
    std::string message;
  };
  const Case cases[] = {
      {pub + fresh_key().public_key().pem(),
       false,
       "public key 'two.pub': holds 2 PEM blocks; a public key file holds exactly one key"},
      {pub + priv,
       false,
       "public key 'two.pub': holds 2 PEM blocks; a public key file holds exactly one key"},
      {priv + priv,
       true,
       "private key 'two.key': holds 2 PEM blocks; a private key file holds exactly one key"},
      {"-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n",
       true,
       "private key 'two.key': is a 'RSA PRIVATE KEY' PEM block; sign takes a PKCS#8 P-256 key "
       "(-----BEGIN PRIVATE KEY----- or -----BEGIN ENCRYPTED PRIVATE KEY-----)"},
      {"-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
       true,
       "private key 'two.key': is a 'OPENSSH PRIVATE KEY' PEM block; sign takes a PKCS#8 P-256 "
       "key (-----BEGIN PRIVATE KEY----- or -----BEGIN ENCRYPTED PRIVATE KEY-----)"},
  };
  for (const auto& c : cases) {
    const std::string message =
        c.is_private ? EcdsaPrivateKey::from_pem(c.pem, std::nullopt, "'two.key'").error().message()
                     : EcdsaPublicKey::from_pem(c.pem, "'two.pub'").error().message();
    EXPECT_EQ(message, c.message);
  }
  // One block, as key generate writes it, still reads.
  EXPECT_TRUE(EcdsaPublicKey::from_pem(pub, "'one.pub'").ok());
  EXPECT_TRUE(EcdsaPrivateKey::from_pem(priv, std::nullopt, "'one.key'").ok());
}

} // namespace
} // namespace lume_unlock::util

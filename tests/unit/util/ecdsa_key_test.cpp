#include "support/file_io.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"
#include "util/ecdsa_key.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::util {
namespace {

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
  EXPECT_NE(without.error().message().find("encrypted and no passphrase"), std::string::npos);
  EXPECT_NE(without.error().hint().find("LUME_UNLOCK_KEY_PASSPHRASE"), std::string::npos);

  auto wrong = EcdsaPrivateKey::from_pem(pem, std::string("wrong horse"), "'k.key'");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message().find("passphrase is wrong"), std::string::npos);
  EXPECT_EQ(wrong.error().message().find("wrong horse"), std::string::npos);

  auto right = EcdsaPrivateKey::from_pem(pem, std::string("correct horse"), "'k.key'");
  ASSERT_TRUE(right.ok()) << right.error().message();
  EXPECT_EQ(right.value().public_key().der(), key.public_key().der());
}

TEST(EcdsaKey, OtherKeyTypesAndGarbageAreRefused) {
  auto garbage = EcdsaPublicKey::from_pem("hello", "'x.pub'");
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.error().message().find("'x.pub'"), std::string::npos);
  auto cosign_native = EcdsaPrivateKey::from_pem(
      "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED SIGSTORE PRIVATE "
      "KEY-----\n",
      std::nullopt,
      "'cosign.key'");
  ASSERT_FALSE(cosign_native.ok());
  EXPECT_NE(cosign_native.error().message().find("cosign's own"), std::string::npos);
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
  EXPECT_NE(refused.error().message().find("not an ECDSA P-256 key"), std::string::npos);
}

} // namespace
} // namespace lume_unlock::util

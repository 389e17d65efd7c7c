// `key generate`, `sign` and `verify-signature` in-process against docker-registry over TLS, and
// our signatures checked by tools that are not ours: openssl dgst over the payload bytes that
// skopeo and curl fetch back, and Python's cryptography reading the same manifest.
#include "oci/registry_client.hpp"
#include "signing/signature_store.hpp"
#include "signing/simple_signing.hpp"
#include "support/cli_run.hpp"
#include "support/file_io.hpp"
#include "support/lume_image_seeder.hpp"
#include "support/process.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/base64.hpp"
#include "util/ecdsa_key.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>

namespace lume_unlock::signing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const char* const k_skopeo = "/usr/bin/skopeo";
const char* const k_openssl = "/usr/bin/openssl";
const char* const k_curl = "/usr/bin/curl";
const char* const k_python = "/usr/bin/python3";

class CliSigningTest : public ::testing::Test {
protected:
  void SetUp() override {
    m_server = test::RegistryServer::start(m_why_not);
    LUME_UNLOCK_REQUIRE(m_server != nullptr, m_why_not);
    setenv("SSL_CERT_FILE", m_server->ca_file().c_str(), 1);
    m_client = std::make_unique<oci::RegistryClient>(m_server->client_options());
    m_v1 = seed("lume/signed:v1", 1);
    m_v2 = seed("lume/signed:v2", 2);
    for (const char* name : {"alice", "bob"}) {
      auto r = test::run_lume_unlock({"key", "generate", m_dir / name});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  void TearDown() override { unsetenv("SSL_CERT_FILE"); }

  /// A small Lume image under `tag`; returns it pinned by digest.
  std::string seed(const std::string& tag, std::uint32_t seed_value) {
    test::LumeImageSpec spec;
    spec.disk_bytes = 64 * 1024 + seed_value;
    spec.seed = seed_value;
    auto seeded = test::seed_lume_image(
        *m_client, oci::parse_reference(m_server->host() + "/" + tag).value(), spec);
    EXPECT_TRUE(seeded.ok()) << seeded.error().message();
    return seeded.value().reference.pinned(seeded.value().digest).str();
  }

  test::CliRun sign(const std::string& image, const std::string& key) {
    return test::run_lume_unlock({"sign", image, "--key", m_dir / (key + ".key")});
  }
  test::CliRun verify(const std::string& image, const std::vector<std::string>& keys) {
    std::vector<std::string> args = {"verify-signature", image};
    for (const auto& key : keys) {
      args.push_back("--key");
      args.push_back(m_dir / (key + ".pub"));
    }
    return test::run_lume_unlock(args);
  }
  /// The signature manifest of `image` as the registry holds it.
  oci::Manifest signature_manifest(const std::string& image) {
    const oci::Reference ref = oci::parse_reference(image).value();
    return m_client->get_manifest(signature_reference(ref, *ref.digest)).value_or_throw().manifest;
  }
  /// Copies the manifest under `from` (a tag or digest) with its blobs to `to`'s tag.
  void copy_manifest(const oci::Reference& from, const oci::Reference& to) {
    const oci::FetchedManifest fetched = m_client->get_manifest(from).value_or_throw();
    std::vector<oci::Descriptor> blobs = fetched.manifest.layers;
    blobs.push_back(*fetched.manifest.config);
    for (const auto& blob : blobs) {
      const std::string path = m_dir / ("blob-" + blob.digest.hex());
      m_client->download_blob(from, blob, path).value_or_throw();
      m_client->push_blob_file(to, path, blob.media_type, blob.digest).value_or_throw();
    }
    m_client->push_manifest(to, fetched.bytes, fetched.media_type).value_or_throw();
  }
  std::string signature_ref_text(const std::string& image) {
    const oci::Reference ref = oci::parse_reference(image).value();
    return signature_reference(ref, *ref.digest).str();
  }

  std::unique_ptr<test::RegistryServer> m_server;
  std::unique_ptr<oci::RegistryClient> m_client;
  std::string m_why_not;
  test::TempDir m_dir;
  std::string m_v1;
  std::string m_v2;
};

TEST_F(CliSigningTest, SignThenVerifyRoundTripsWithThePayloadInCosignsLayout) {
  auto signed_run = sign(m_v1, "alice");
  ASSERT_EQ(signed_run.exit_code, 0) << signed_run.err;
  EXPECT_THAT(signed_run.out, HasSubstr("pushed " + signature_ref_text(m_v1) + " (1 signature)"));

  const oci::Manifest manifest = signature_manifest(m_v1);
  ASSERT_EQ(manifest.layers.size(), 1u);
  EXPECT_EQ(manifest.media_type, "application/vnd.oci.image.manifest.v1+json");
  EXPECT_EQ(manifest.layers[0].media_type, "application/vnd.dev.cosign.simplesigning.v1+json");
  ASSERT_EQ(manifest.layers[0].annotations.count("dev.cosignproject.cosign/signature"), 1u);

  auto verified = verify(m_v1, {"alice"});
  ASSERT_EQ(verified.exit_code, 0) << verified.err;
  const std::string fingerprint =
      util::EcdsaPublicKey::from_pem(test::slurp(m_dir / "alice.pub"), "t").value().fingerprint();
  EXPECT_THAT(verified.out, HasSubstr("verified " + m_v1));
  EXPECT_THAT(verified.out, HasSubstr("signed by " + fingerprint));

  // A tag is resolved first; --json names the key and the payload.
  auto by_tag = test::run_lume_unlock({"verify-signature",
                                       m_server->host() + "/lume/signed:v1",
                                       "--key",
                                       m_dir / "alice.pub",
                                       "--json"});
  ASSERT_EQ(by_tag.exit_code, 0) << by_tag.err;
  const auto doc = nlohmann::json::parse(by_tag.out);
  EXPECT_EQ(doc["image"], m_v1);
  EXPECT_EQ(doc["key"], fingerprint);
  EXPECT_EQ(doc["payload_digest"], manifest.layers[0].digest.str());
}

TEST_F(CliSigningTest, ASecondSignerAppendsALayerAndTheFirstStaysByteForByte) {
  ASSERT_EQ(sign(m_v1, "alice").exit_code, 0);
  const oci::Descriptor first = signature_manifest(m_v1).layers.at(0);
  auto second = sign(m_v1, "bob");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.out, HasSubstr("(2 signatures)"));
  const oci::Manifest both = signature_manifest(m_v1);
  ASSERT_EQ(both.layers.size(), 2u);
  EXPECT_EQ(both.layers[0], first);
  EXPECT_EQ(verify(m_v1, {"alice"}).exit_code, 0);
  EXPECT_EQ(verify(m_v1, {"bob"}).exit_code, 0);

  // The same key again pushes nothing.
  auto again = sign(m_v1, "alice");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("already signed"));
  EXPECT_EQ(signature_manifest(m_v1).layers.size(), 2u);
}

TEST_F(CliSigningTest, AnUnsignedImageIsRefusedAsNotSigned) {
  auto r = verify(m_v2, {"alice"});
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_THAT(r.err,
              HasSubstr("not signed: no cosign signature under '" + signature_ref_text(m_v2)));
}

TEST_F(CliSigningTest, ASignatureByAnUnknownKeyIsRefusedAndAnyTrustedKeySuffices) {
  ASSERT_EQ(sign(m_v1, "bob").exit_code, 0);
  auto r = verify(m_v1, {"alice"});
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_THAT(r.err, HasSubstr("signed by another key: none of the 1 signature(s) verifies with"));
  EXPECT_EQ(verify(m_v1, {"alice", "bob"}).exit_code, 0);
}

TEST_F(CliSigningTest, ASignatureCopiedFromAnotherImageIsRefusedAsAnotherDigest) {
  ASSERT_EQ(sign(m_v1, "alice").exit_code, 0);
  const oci::Reference v1 = oci::parse_reference(m_v1).value();
  const oci::Reference v2 = oci::parse_reference(m_v2).value();
  copy_manifest(signature_reference(v1, *v1.digest), signature_reference(v2, *v2.digest));
  auto r = verify(m_v2, {"alice"});
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_THAT(r.err,
              HasSubstr("payload digest differs from the pinned digest: the trusted key signed " +
                        v1.digest->str() + ", not " + v2.digest->str()));
}

TEST_F(CliSigningTest, ATamperedPayloadNoLongerVerifies) {
  ASSERT_EQ(sign(m_v1, "alice").exit_code, 0);
  const oci::Reference v2 = oci::parse_reference(m_v2).value();
  // Alice's signature over v1's payload, put beside a payload that names v2.
  const oci::Descriptor original = signature_manifest(m_v1).layers.at(0);
  SignatureSet empty{signature_reference(v2, *v2.digest), std::nullopt, {}};
  const std::string forged = serialize_payload({v2.repository_path(), *v2.digest, {}});
  append_signature(*m_client, empty, forged, original.annotations.at(signature_annotation))
      .value_or_throw();
  auto r = verify(m_v2, {"alice"});
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_THAT(r.err, HasSubstr("signed by another key"));
  EXPECT_THAT(r.err, HasSubstr("an altered payload"));
}

TEST_F(CliSigningTest, APayloadForAnotherRepositoryIsRefused) {
  ASSERT_EQ(sign(m_v1, "alice").exit_code, 0);
  const oci::Reference v1 = oci::parse_reference(m_v1).value();
  // The same image (same digest) in another repository, with the signature copied over.
  const oci::Reference elsewhere =
      oci::parse_reference(m_server->host() + "/lume/mirror@" + v1.digest->str()).value();
  copy_manifest(v1, oci::parse_reference(m_server->host() + "/lume/mirror:v1").value());
  copy_manifest(signature_reference(v1, *v1.digest), signature_reference(elsewhere, *v1.digest));
  auto r = verify(elsewhere.str(), {"alice"});
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_THAT(r.err,
              HasSubstr("payload names another repository: signed for '" + v1.repository_path() +
                        "', pulled from '" + elsewhere.repository_path() + "'"));
}

TEST_F(CliSigningTest, SignNeedsADigestAnOwnerOnlyKeyAndItsPassphrase) {
  auto by_tag = sign(m_server->host() + "/lume/signed:v1", "alice");
  EXPECT_EQ(by_tag.exit_code, 2);
  EXPECT_THAT(by_tag.err, HasSubstr("names none"));

  chmod((m_dir / "bob.key").c_str(), 0640);
  auto loose = sign(m_v1, "bob");
  EXPECT_EQ(loose.exit_code, 2);
  EXPECT_THAT(loose.err, HasSubstr("chmod 600"));

  setenv("LUME_UNLOCK_KEY_PASSPHRASE", "open sesame", 1);
  auto generated = test::run_lume_unlock({"key", "generate", m_dir / "carol"});
  unsetenv("LUME_UNLOCK_KEY_PASSPHRASE");
  ASSERT_EQ(generated.exit_code, 0) << generated.err;
  EXPECT_THAT(generated.out, HasSubstr("encrypted"));
  EXPECT_THAT(generated.out, Not(HasSubstr("open sesame")));
  auto locked = sign(m_v1, "carol");
  EXPECT_EQ(locked.exit_code, 2);
  EXPECT_THAT(locked.err, HasSubstr("LUME_UNLOCK_KEY_PASSPHRASE"));
  setenv("LUME_UNLOCK_KEY_PASSPHRASE", "open sesame", 1);
  auto unlocked = sign(m_v1, "carol");
  unsetenv("LUME_UNLOCK_KEY_PASSPHRASE");
  EXPECT_EQ(unlocked.exit_code, 0) << unlocked.err;
  EXPECT_EQ(verify(m_v1, {"carol"}).exit_code, 0);
}

// Tools that are not ours: skopeo fetches the signature manifest, curl the payload blob, and
// `openssl dgst -sha256 -verify` checks the annotation's signature over exactly those bytes;
// Python's cryptography checks the same manifest and payload.
TEST_F(CliSigningTest, OpensslAndPythonCryptographyVerifyOurSignatureOverTheRegistrysBytes) {
  for (const char* tool : {k_skopeo, k_openssl, k_curl, k_python}) {
    LUME_UNLOCK_REQUIRE(access(tool, X_OK) == 0, std::string(tool) + " is not installed");
  }
  ASSERT_EQ(sign(m_v1, "alice").exit_code, 0);
  const test::CommandOutput raw = test::run_command({k_skopeo,
                                                     "inspect",
                                                     "--raw",
                                                     m_server->skopeo_trust(),
                                                     "docker://" + signature_ref_text(m_v1)});
  ASSERT_EQ(raw.exit_status, 0) << raw.stderr_text;
  test::write_file(m_dir / "sig-manifest.json", raw.stdout_text);
  const auto manifest = nlohmann::json::parse(raw.stdout_text);
  const auto& layer = manifest["layers"][0];
  const std::string payload_digest = layer["digest"];
  const test::CommandOutput payload =
      test::run_command({k_curl,
                         "-sSf",
                         "--cacert",
                         m_server->ca_file(),
                         "-o",
                         m_dir / "payload.json",
                         m_server->url() + "/v2/lume/signed/blobs/" + payload_digest});
  ASSERT_EQ(payload.exit_status, 0) << payload.stderr_text;
  const auto signature = util::base64_decode(
      layer["annotations"]["dev.cosignproject.cosign/signature"].get<std::string>());
  ASSERT_TRUE(signature.has_value());
  test::write_file(m_dir / "sig.der", *signature);

  const test::CommandOutput openssl = test::run_command({k_openssl,
                                                         "dgst",
                                                         "-sha256",
                                                         "-verify",
                                                         m_dir / "alice.pub",
                                                         "-signature",
                                                         m_dir / "sig.der",
                                                         m_dir / "payload.json"});
  EXPECT_EQ(openssl.exit_status, 0) << openssl.stdout_text << openssl.stderr_text;
  EXPECT_EQ(openssl.stdout_text, "Verified OK\n");
  const test::CommandOutput wrong = test::run_command({k_openssl,
                                                       "dgst",
                                                       "-sha256",
                                                       "-verify",
                                                       m_dir / "bob.pub",
                                                       "-signature",
                                                       m_dir / "sig.der",
                                                       m_dir / "payload.json"});
  EXPECT_NE(wrong.exit_status, 0);

  const char* script = R"(
import base64, hashlib, json, sys
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
manifest = json.load(open(sys.argv[1]))
payload = open(sys.argv[2], "rb").read()
key = serialization.load_pem_public_key(open(sys.argv[3], "rb").read())
layer = manifest["layers"][0]
assert layer["mediaType"] == "application/vnd.dev.cosign.simplesigning.v1+json"
assert layer["digest"] == "sha256:" + hashlib.sha256(payload).hexdigest()
signature = base64.b64decode(layer["annotations"]["dev.cosignproject.cosign/signature"])
key.verify(signature, payload, ec.ECDSA(hashes.SHA256()))
critical = json.loads(payload)["critical"]
print(critical["type"], critical["image"]["docker-manifest-digest"], critical["identity"]["docker-reference"])
)";
  const test::CommandOutput python = test::run_command({k_python,
                                                        "-c",
                                                        script,
                                                        m_dir / "sig-manifest.json",
                                                        m_dir / "payload.json",
                                                        m_dir / "alice.pub"});
  ASSERT_EQ(python.exit_status, 0) << python.stderr_text;
  const oci::Reference v1 = oci::parse_reference(m_v1).value();
  EXPECT_EQ(python.stdout_text,
            "cosign container image signature " + v1.digest->str() + " " + v1.repository_path() +
                "\n");
}

} // namespace
} // namespace lume_unlock::signing

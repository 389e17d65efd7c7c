// The registry client against a small misbehaving registry (cpp-httplib): every fault is an
// Error of category registry with an exact message, and nothing is left half-written.
#include "oci/manifest.hpp"
#include "oci/registry_client.hpp"
#include "support/loopback_http_server.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/encoding.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <vector>

namespace lume_unlock::oci {
namespace {

/// The misbehaving registry: a loopback HTTP server whose handlers each test sets.
class FaultServer : public test::LoopbackHttpServer {
public:
  std::string host() const { return "127.0.0.1:" + std::to_string(port()); }
  Reference ref(const std::string& path) const {
    return parse_reference(host() + "/" + path).value_or_throw();
  }
};

/// The fault server speaks plain HTTP on loopback, which our client reaches only when told.
RegistryClientOptions fast_options() {
  RegistryClientOptions options;
  options.insecure_registries = {"127.0.0.1"};
  options.retry.backoff = std::chrono::milliseconds(1);
  return options;
}

const std::string k_manifest =
    R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","layers":[]})";

std::size_t entries(const std::string& dir) {
  return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(dir),
                                                std::filesystem::directory_iterator()));
}

TEST(RegistryFaults, HeaderDigestThatDiffersFromTheBodyIsRejectedNamingBoth) {
  FaultServer s;
  const Digest other = Digest::of_bytes("something else");
  s.server().Get("/v2/a/b/manifests/v1", [&](const httplib::Request&, httplib::Response& res) {
    res.set_header("Docker-Content-Digest", other.str());
    res.set_content(k_manifest, media_type::oci_manifest);
  });
  RegistryClient client(fast_options());
  auto got = client.get_manifest(s.ref("a/b:v1"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().category(), ErrorCategory::registry);
  EXPECT_EQ(exit_code(got.error().category()), 4);
  EXPECT_EQ(got.error().message(),
            "cannot get manifest '" + s.host() +
                "/a/b:v1': the registry's Docker-Content-Digest '" + other.str() +
                "' does not match the digest of the received bytes '" +
                Digest::of_bytes(k_manifest).str() + "'");
}

TEST(RegistryFaults, ByDigestGetMustHashToTheRequestedDigest) {
  FaultServer s;
  const Digest wanted = Digest::of_bytes("the manifest we asked for");
  s.server().Get(
      "/v2/a/b/manifests/" + wanted.str(), [&](const httplib::Request&, httplib::Response& res) {
        res.set_content(k_manifest, media_type::oci_manifest); // no header: the bytes alone decide
      });
  RegistryClient client(fast_options());
  const Reference pinned = s.ref("a/b@" + wanted.str());
  auto got = client.get_manifest(pinned);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().message(),
            "cannot get manifest '" + pinned.str() + "': the received bytes hash to '" +
                Digest::of_bytes(k_manifest).str() + "', not the requested '" + wanted.str() + "'");
}

TEST(RegistryFaults, ManifestWithoutHeaderIsHashedAndAccepted) {
  FaultServer s;
  s.server().Get("/v2/a/b/manifests/v1", [&](const httplib::Request& req, httplib::Response& res) {
    EXPECT_EQ(req.get_header_value("Accept"), manifest_accept);
    res.set_content(k_manifest, "application/vnd.oci.image.manifest.v1+json; charset=utf-8");
  });
  RegistryClient client(fast_options());
  auto got = client.get_manifest(s.ref("a/b:v1"));
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_EQ(got.value().digest, Digest::of_bytes(k_manifest));
  EXPECT_EQ(got.value().media_type, media_type::oci_manifest);
}

TEST(RegistryFaults, ManifestOverFourMebibytesIsRefused) {
  FaultServer s;
  const std::string huge(4 * 1024 * 1024 + 1, ' ');
  s.server().Get("/v2/a/b/manifests/big", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(huge, media_type::oci_manifest);
  });
  RegistryClient client(fast_options());
  auto got = client.get_manifest(s.ref("a/b:big"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().category(), ErrorCategory::registry);
  EXPECT_EQ(got.error().message(),
            "cannot get manifest '" + s.host() +
                "/a/b:big': the manifest is larger than the 4194304-byte limit");
}

TEST(RegistryFaults, MissingTagIsA404WithTheRegistryMessage) {
  FaultServer s;
  s.server().Get("/v2/a/b/manifests/gone", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_content(R"({"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]})",
                    "application/json");
  });
  RegistryClient client(fast_options());
  auto got = client.get_manifest(s.ref("a/b:gone"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().message(),
            "cannot get manifest '" + s.host() + "/a/b:gone': GET http://" + s.host() +
                "/v2/a/b/manifests/gone answered HTTP 404: MANIFEST_UNKNOWN: manifest unknown");
}

TEST(RegistryFaults, UnauthorizedWithoutAUsableChallengeIsClear) {
  FaultServer s;
  std::atomic<int> calls{0};
  s.server().Get("/v2/a/b/manifests/v1", [&](const httplib::Request&, httplib::Response& res) {
    ++calls;
    res.status = 401;
  });
  RegistryClient client(fast_options());
  auto got = client.get_manifest(s.ref("a/b:v1"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().category(), ErrorCategory::registry);
  EXPECT_EQ(got.error().message(),
            "cannot get manifest '" + s.host() + "/a/b:v1': GET http://" + s.host() +
                "/v2/a/b/manifests/v1 answered HTTP 401 without a usable WWW-Authenticate "
                "challenge");
  EXPECT_EQ(calls.load(), 1);
}

class StaticCredentials : public CredentialSource {
public:
  std::optional<Credentials> lookup(const std::string&) const override {
    return Credentials{"robot", "pa55"};
  }
};

TEST(RegistryFaults, BearerChallengeGetsATokenWithTheRepositoryScope) {
  FaultServer s;
  std::string token_query;
  std::string token_authorization;
  s.server().Get("/token", [&](const httplib::Request& req, httplib::Response& res) {
    token_query = req.get_param_value("service") + " " + req.get_param_value("scope");
    token_authorization = req.get_header_value("Authorization");
    res.set_content(R"({"token":"tok-123"})", "application/json");
  });
  s.server().Get("/v2/a/b/manifests/v1", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Authorization") != "Bearer tok-123") {
      res.status = 401;
      res.set_header("WWW-Authenticate",
                     "Bearer realm=\"http://" + s.host() +
                         "/token\",service=\"fault.test\",scope=\"repository:a/b:pull\"");
      return;
    }
    res.set_content(k_manifest, media_type::oci_manifest);
  });
  s.server().Get("/v2/a/b/manifests/denied", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 403;
    res.set_content(
        R"({"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]})",
        "application/json");
  });
  auto options = fast_options();
  options.credentials = std::make_shared<StaticCredentials>();
  RegistryClient client(options);
  auto got = client.get_manifest(s.ref("a/b:v1"));
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_EQ(token_query, "fault.test repository:a/b:pull");
  EXPECT_EQ(token_authorization, "Basic " + util::base64_encode("robot:pa55"));
  // The cached token is reused; errors never carry it or the password.
  auto denied = client.get_manifest(s.ref("a/b:denied"));
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().message(),
            "cannot get manifest '" + s.host() + "/a/b:denied': GET http://" + s.host() +
                "/v2/a/b/manifests/denied answered HTTP 403: DENIED: requested access to "
                "the resource is denied");
  EXPECT_EQ(denied.error().message().find("tok-123"), std::string::npos);
  EXPECT_EQ(denied.error().hint().find("pa55"), std::string::npos);
}

TEST(RegistryFaults, FailedTokenRequestNamesTheRealmOnly) {
  FaultServer s;
  s.server().Get("/token", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 401;
    res.set_content(R"({"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]})",
                    "application/json");
  });
  s.server().Get("/v2/a/b/manifests/v1", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 401;
    res.set_header("WWW-Authenticate",
                   "Bearer realm=\"http://" + s.host() + "/token\",service=\"svc\"");
  });
  auto options = fast_options();
  options.credentials = std::make_shared<StaticCredentials>();
  RegistryClient client(options);
  auto got = client.get_manifest(s.ref("a/b:v1"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().message(),
            "cannot get manifest '" + s.host() + "/a/b:v1': token request to 'http://" + s.host() +
                "/token': GET http://" + s.host() +
                "/token?service=svc&scope=repository:a/b:pull answered HTTP 401: UNAUTHORIZED: "
                "authentication required");
}

TEST(RegistryFaults, BasicChallengeSendsTheCredentials) {
  FaultServer s;
  s.server().Get("/v2/a/b/manifests/v1", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Authorization") != "Basic " + util::base64_encode("robot:pa55")) {
      res.status = 401;
      res.set_header("WWW-Authenticate", "Basic realm=\"registry\"");
      return;
    }
    res.set_content(k_manifest, media_type::oci_manifest);
  });
  auto options = fast_options();
  options.credentials = std::make_shared<StaticCredentials>();
  EXPECT_TRUE(RegistryClient(options).get_manifest(s.ref("a/b:v1")).ok());
  auto anonymous = RegistryClient(fast_options()).get_manifest(s.ref("a/b:v1"));
  ASSERT_FALSE(anonymous.ok());
  EXPECT_EQ(anonymous.error().message(),
            "cannot get manifest '" + s.host() + "/a/b:v1': the registry '" + s.host() +
                "' requires a username and password");
}

TEST(RegistryFaults, TemporaryFailuresAreRetriedABoundedNumberOfTimes) {
  FaultServer s;
  std::atomic<int> flaky{0};
  std::atomic<int> down{0};
  s.server().Get("/v2/a/b/manifests/flaky", [&](const httplib::Request&, httplib::Response& res) {
    if (++flaky <= 2) {
      res.status = 503;
      return;
    }
    res.set_content(k_manifest, media_type::oci_manifest);
  });
  s.server().Get("/v2/a/b/manifests/down", [&](const httplib::Request&, httplib::Response& res) {
    ++down;
    res.status = 503;
    res.set_content("upstream unavailable", "text/plain");
  });
  RegistryClient client(fast_options());
  EXPECT_TRUE(client.get_manifest(s.ref("a/b:flaky")).ok());
  EXPECT_EQ(flaky.load(), 3);
  auto got = client.get_manifest(s.ref("a/b:down"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(down.load(), 3);
  EXPECT_EQ(got.error().message(),
            "cannot get manifest '" + s.host() + "/a/b:down': GET http://" + s.host() +
                "/v2/a/b/manifests/down answered HTTP 503: upstream unavailable");
  EXPECT_EQ(got.error().hint(), "the registry is failing or rate-limiting; retry later");
}

class BlobFaults : public ::testing::Test {
protected:
  Descriptor blob_of(const std::string& bytes) {
    Descriptor d;
    d.media_type = media_type::lume_disk;
    d.digest = Digest::of_bytes(bytes);
    d.size = bytes.size();
    return d;
  }
  std::string what(const Descriptor& d) const {
    return "cannot download blob '" + d.digest.str() + "' of '" + m_server.host() + "/a/b'";
  }
  FaultServer m_server;
  test::TempDir m_dir;
  const std::string m_expected = std::string(100000, 'x');
};

TEST_F(BlobFaults, BlobWhoseBytesDoNotMatchItsDigestLeavesNothing) {
  const Descriptor d = blob_of(m_expected);
  const std::string wrong(m_expected.size(), 'y');
  m_server.server().Get("/v2/a/b/blobs/" + d.digest.str(),
                        [&](const httplib::Request&, httplib::Response& res) {
                          res.set_content(wrong, "application/octet-stream");
                        });
  RegistryClient client(fast_options());
  auto status = client.download_blob(m_server.ref("a/b:x"), d, m_dir / "blob");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().category(), ErrorCategory::registry);
  EXPECT_EQ(status.error().message(),
            what(d) + ": the received bytes hash to '" + Digest::of_bytes(wrong).str() +
                "', not the requested '" + d.digest.str() + "'");
  EXPECT_EQ(entries(m_dir.path()), 0u);
}

TEST_F(BlobFaults, ShortBlobIsRejectedAndTheOldFileStays) {
  const Descriptor d = blob_of(m_expected);
  m_server.server().Get("/v2/a/b/blobs/" + d.digest.str(),
                        [&](const httplib::Request&, httplib::Response& res) {
                          res.set_content(m_expected.substr(0, 4000), "application/octet-stream");
                        });
  ASSERT_TRUE(util::write_file_atomic(m_dir / "blob", "previous").ok());
  RegistryClient client(fast_options());
  auto status = client.download_blob(m_server.ref("a/b:x"), d, m_dir / "blob");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            what(d) + ": received 4000 bytes, the descriptor states 100000");
  EXPECT_EQ(util::read_file(m_dir / "blob").value(), "previous");
  EXPECT_EQ(entries(m_dir.path()), 1u);
}

/// Serves the expected blob by ranges (httplib answers a Range with 206), dropping the
/// connection at byte `drop_at` of the file while `drops` last; records each request's Range.
void serve_dropping(FaultServer& server,
                    const Descriptor& d,
                    const std::string& bytes,
                    std::atomic<int>& drops,
                    std::vector<std::string>& ranges) {
  server.server().Get(
      "/v2/a/b/blobs/" + d.digest.str(), [&](const httplib::Request& req, httplib::Response& res) {
        ranges.push_back(req.get_header_value("Range"));
        const bool drop = drops-- > 0;
        res.set_content_provider(
            bytes.size(),
            "application/octet-stream",
            [&bytes, drop](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
              const std::size_t end =
                  drop ? std::min<std::size_t>(offset + length, 50000) : offset + length;
              if (offset >= end) {
                return false; // drop the connection halfway through the file
              }
              sink.write(bytes.data() + offset, end - offset);
              return true;
            });
      });
}

TEST_F(BlobFaults, TruncatedTransferResumesWithRangesThenFailsKeepingThePartial) {
  const Descriptor d = blob_of(m_expected);
  std::atomic<int> drops{100};
  std::vector<std::string> ranges;
  serve_dropping(m_server, d, m_expected, drops, ranges);
  RegistryClient client(fast_options());
  auto status = client.download_blob(m_server.ref("a/b:x"), d, m_dir / "blob");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(ranges, (std::vector<std::string>{"", "bytes=50000-", "bytes=50000-"}));
  EXPECT_EQ(status.error().category(), ErrorCategory::registry);
  EXPECT_EQ(status.error().message(),
            what(d) + ": transfer closed with 50000 bytes remaining to read (after 3 attempts)");
  EXPECT_FALSE(std::filesystem::exists(m_dir / "blob"));
  EXPECT_EQ(util::read_file(m_dir / "blob.partial").value(), m_expected.substr(0, 50000));
}

TEST_F(BlobFaults, AnInterruptedBlobContinuesWithARangeRequestNotFromZero) {
  const Descriptor d = blob_of(m_expected);
  std::atomic<int> drops{1};
  std::vector<std::string> ranges;
  serve_dropping(m_server, d, m_expected, drops, ranges);
  RegistryClient client(fast_options());
  auto status = client.download_blob(m_server.ref("a/b:x"), d, m_dir / "blob");
  ASSERT_TRUE(status.ok()) << status.error().message();
  EXPECT_EQ(ranges, (std::vector<std::string>{"", "bytes=50000-"}));
  EXPECT_EQ(util::read_file(m_dir / "blob").value(), m_expected);
  EXPECT_EQ(entries(m_dir.path()), 1u) << "the partial is renamed into place";
}

TEST_F(BlobFaults, APartialLeftByAnEarlierCallIsResumed) {
  const Descriptor d = blob_of(m_expected);
  std::atomic<int> drops{1};
  std::vector<std::string> ranges;
  serve_dropping(m_server, d, m_expected, drops, ranges);
  auto options = fast_options();
  options.retry.max_retries = 0; // the first call ends at the drop
  RegistryClient client(options);
  ASSERT_FALSE(client.download_blob(m_server.ref("a/b:x"), d, m_dir / "blob").ok());
  auto status = client.download_blob(m_server.ref("a/b:x"), d, m_dir / "blob");
  ASSERT_TRUE(status.ok()) << status.error().message();
  EXPECT_EQ(ranges, (std::vector<std::string>{"", "bytes=50000-"}));
  EXPECT_EQ(util::read_file(m_dir / "blob").value(), m_expected);
}

TEST_F(BlobFaults, LongerBlobThanItsDescriptorIsCutOff) {
  const Descriptor d = blob_of(m_expected);
  m_server.server().Get("/v2/a/b/blobs/" + d.digest.str(),
                        [&](const httplib::Request&, httplib::Response& res) {
                          res.set_content(m_expected + "extra", "application/octet-stream");
                        });
  RegistryClient client(fast_options());
  auto status = client.download_blob(m_server.ref("a/b:x"), d, m_dir / "blob");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            what(d) + ": the server sent more than the 100000 bytes expected");
  EXPECT_EQ(entries(m_dir.path()), 0u);
}

TEST_F(BlobFaults, ErrorBodiesNeverLandInTheFile) {
  const Descriptor d = blob_of(m_expected);
  m_server.server().Get(
      "/v2/a/b/blobs/" + d.digest.str(), [&](const httplib::Request&, httplib::Response& res) {
        res.status = 404;
        res.set_content(
            R"({"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry"}]})",
            "application/json");
      });
  RegistryClient client(fast_options());
  auto status = client.download_blob(m_server.ref("a/b:x"), d, m_dir / "blob");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            what(d) + ": GET http://" + m_server.host() + "/v2/a/b/blobs/" + d.digest.str() +
                " answered HTTP 404: BLOB_UNKNOWN: blob unknown to registry");
  EXPECT_EQ(entries(m_dir.path()), 0u);
}

TEST(RegistryFaults, UploadThatTheRegistryDoesNotKeepFailsTheCrossCheck) {
  FaultServer s;
  s.server().Post("/v2/a/b/blobs/uploads/", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 202;
    res.set_header("Location", "/v2/a/b/blobs/uploads/session-1?_state=abc");
  });
  std::string put_digest;
  s.server().Put(
      "/v2/a/b/blobs/uploads/session-1", [&](const httplib::Request& req, httplib::Response& res) {
        put_digest = req.get_param_value("digest") + " " + req.get_param_value("_state") + " " +
                     std::to_string(req.body.size());
        res.status = 201; // claims success, but HEAD below never finds the blob
      });
  RegistryClient client(fast_options());
  auto pushed = client.push_blob_bytes(s.ref("a/b:x"), "payload", media_type::octet_stream);
  ASSERT_FALSE(pushed.ok());
  EXPECT_EQ(put_digest, Digest::of_bytes("payload").str() + " abc 7");
  EXPECT_EQ(pushed.error().message(),
            "cannot upload blob '" + Digest::of_bytes("payload").str() + "' to '" + s.host() +
                "/a/b': after the upload, HEAD answered HTTP 404 with size 0 instead of 200 "
                "with size 7");
}

TEST(RegistryFaults, PushedManifestWhoseStoredDigestDiffersIsAnError) {
  FaultServer s;
  const Digest other = Digest::of_bytes("not what we sent");
  std::string received;
  s.server().Put("/v2/a/b/manifests/v1", [&](const httplib::Request& req, httplib::Response& res) {
    received = req.get_header_value("Content-Type") + " " + req.body;
    res.status = 201;
    res.set_header("Docker-Content-Digest", other.str());
  });
  RegistryClient client(fast_options());
  auto pushed = client.push_manifest(s.ref("a/b:v1"), k_manifest, media_type::oci_manifest);
  ASSERT_FALSE(pushed.ok());
  EXPECT_EQ(received, std::string(media_type::oci_manifest) + " " + k_manifest);
  EXPECT_EQ(pushed.error().message(),
            "cannot push manifest '" + s.host() +
                "/a/b:v1': the registry's "
                "Docker-Content-Digest '" +
                other.str() + "' does not match the digest of the pushed bytes '" +
                Digest::of_bytes(k_manifest).str() + "'");
}

TEST(RegistryFaults, AnIndexResolvesLikeAManifest) {
  FaultServer s;
  const std::string index =
      R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json",)"
      R"("manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" +
      Digest::of_bytes(k_manifest).str() + R"(","size":)" + std::to_string(k_manifest.size()) +
      "}]}";
  s.server().Get("/v2/a/b/manifests/multi", [&](const httplib::Request&, httplib::Response& res) {
    res.set_header("Docker-Content-Digest", Digest::of_bytes(index).str());
    res.set_content(index, media_type::oci_index);
  });
  RegistryClient client(fast_options());
  auto got = client.get_manifest(s.ref("a/b:multi"));
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_TRUE(got.value().manifest.is_index());
  EXPECT_EQ(got.value().media_type, media_type::oci_index);
  EXPECT_EQ(got.value().manifest.manifests.at(0).digest, Digest::of_bytes(k_manifest));
}

TEST(RegistryFaults, UploadProgressIsReportedInSteps) {
  FaultServer s;
  std::string stored;
  s.server().Post("/v2/a/b/blobs/uploads/", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 202;
    res.set_header("Location", "http://" + s.host() + "/v2/a/b/blobs/uploads/u1");
  });
  s.server().Put("/v2/a/b/blobs/uploads/u1",
                 [&](const httplib::Request& req, httplib::Response& res) {
                   stored = req.body;
                   res.status = 201;
                 });
  s.server().Get(R"(/v2/a/b/blobs/(sha256:[0-9a-f]+))",
                 [&](const httplib::Request& req, httplib::Response& res) {
                   if (stored.empty() || req.matches[1] != Digest::of_bytes(stored).str()) {
                     res.status = 404;
                     return;
                   }
                   res.set_content(stored, "application/octet-stream");
                 });
  std::vector<std::uint64_t> reported;
  bool finished = false;
  auto options = fast_options();
  options.progress = [&](const util::ProgressEvent& e) {
    EXPECT_EQ(e.step, "upload blob");
    EXPECT_EQ(e.total, std::optional<std::uint64_t>(20u << 20));
    reported.push_back(e.done.value_or(0));
    finished = finished || e.finished;
  };
  RegistryClient client(options);
  const std::string payload(20u << 20, 'p');
  auto pushed = client.push_blob_bytes(s.ref("a/b:x"), payload, media_type::octet_stream);
  ASSERT_TRUE(pushed.ok()) << pushed.error().message();
  EXPECT_EQ(stored.size(), payload.size());
  ASSERT_GE(reported.size(), 3u); // past 8 MiB, past 16 MiB, finished
  EXPECT_LE(reported.size(), 4u);
  EXPECT_EQ(reported.back(), payload.size());
  EXPECT_TRUE(finished);
}

TEST(RegistryClientUrls, PlainHttpOnlyForInsecureRegistriesLoopbackIncluded) {
  RegistryClientOptions options;
  options.insecure_registries = {"registry.lan:5000", "build-cache"};
  RegistryClient client(options);
  EXPECT_EQ(client.base_url("ghcr.io"), "https://ghcr.io");
  EXPECT_EQ(client.base_url("127.0.0.1:5000"), "https://127.0.0.1:5000");
  EXPECT_EQ(client.base_url("localhost"), "https://localhost");
  EXPECT_EQ(client.base_url("registry.lan:5000"), "http://registry.lan:5000");
  EXPECT_EQ(client.base_url("registry.lan:6000"), "https://registry.lan:6000");
  EXPECT_EQ(client.base_url("build-cache:8080"), "http://build-cache:8080");
  EXPECT_EQ(client.base_url("127.example.com"), "https://127.example.com");
}

} // namespace
} // namespace lume_unlock::oci

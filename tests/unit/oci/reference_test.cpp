#include "oci/reference.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::oci {
namespace {

const std::string k_hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const std::string k_digest = "sha256:" + k_hex;
const std::string k_hint = "write it as [registry/]repository[:tag][@sha256:<64 hex>], e.g. "
                           "'ghcr.io/trycua/macos-tahoe-cua:latest'";

struct Good {
  std::string input;
  std::string registry;
  std::string repository;
  std::optional<std::string> tag;
  std::optional<std::string> digest;
  std::string canonical;
};

TEST(Reference, ParsesEveryGoodReference) {
  const std::vector<Good> cases = {
      {"macos-tahoe-cua:latest",
       "ghcr.io",
       "macos-tahoe-cua",
       "latest",
       {},
       "ghcr.io/macos-tahoe-cua:latest"},
      {"trycua/macos-tahoe-cua",
       "ghcr.io",
       "trycua/macos-tahoe-cua",
       "latest",
       {},
       "ghcr.io/trycua/macos-tahoe-cua:latest"},
      {"ghcr.io/trycua/macos-tahoe-cua:26.1",
       "ghcr.io",
       "trycua/macos-tahoe-cua",
       "26.1",
       {},
       "ghcr.io/trycua/macos-tahoe-cua:26.1"},
      {"127.0.0.1:5000/lume/test:v1",
       "127.0.0.1:5000",
       "lume/test",
       "v1",
       {},
       "127.0.0.1:5000/lume/test:v1"},
      {"localhost/a", "localhost", "a", "latest", {}, "localhost/a:latest"},
      {"localhost:5000/a/b/c:_x", "localhost:5000", "a/b/c", "_x", {}, "localhost:5000/a/b/c:_x"},
      {"registry.example.com/a.b/c__d/e--f/g_h:T.a-g_1",
       "registry.example.com",
       "a.b/c__d/e--f/g_h",
       "T.a-g_1",
       {},
       "registry.example.com/a.b/c__d/e--f/g_h:T.a-g_1"},
      {"a@" + k_digest, "ghcr.io", "a", {}, k_digest, "ghcr.io/a@" + k_digest},
      {"ghcr.io/o/a:sha256-" + k_hex,
       "ghcr.io",
       "o/a",
       "sha256-" + k_hex,
       {},
       "ghcr.io/o/a:sha256-" + k_hex},
      {"my-host:8080/x", "my-host:8080", "x", "latest", {}, "my-host:8080/x:latest"},
      // Issue 27: IPv6 registry hosts are valid references, printed back the same.
      {"[::1]:5000/x:y", "[::1]:5000", "x", "y", {}, "[::1]:5000/x:y"},
      {"[::1]/a/b", "[::1]", "a/b", "latest", {}, "[::1]/a/b:latest"},
      {"[2001:db8::7]:443/a@" + k_digest,
       "[2001:db8::7]:443",
       "a",
       {},
       k_digest,
       "[2001:db8::7]:443/a@" + k_digest},
      {"127.0.0.1:65535/a", "127.0.0.1:65535", "a", "latest", {}, "127.0.0.1:65535/a:latest"},
      {"127.0.0.1:1/a", "127.0.0.1:1", "a", "latest", {}, "127.0.0.1:1/a:latest"},
      {"a:" + std::string(128, 't'),
       "ghcr.io",
       "a",
       std::string(128, 't'),
       {},
       "ghcr.io/a:" + std::string(128, 't')},
  };
  for (const auto& c : cases) {
    auto ref = parse_reference(c.input);
    ASSERT_TRUE(ref.ok()) << c.input << ": " << ref.error().message();
    EXPECT_EQ(ref.value().registry, c.registry) << c.input;
    EXPECT_EQ(ref.value().repository, c.repository) << c.input;
    EXPECT_EQ(ref.value().tag, c.tag) << c.input;
    EXPECT_EQ(ref.value().digest ? std::optional<std::string>(ref.value().digest->str())
                                 : std::nullopt,
              c.digest)
        << c.input;
    EXPECT_EQ(ref.value().str(), c.canonical) << c.input;
    // The canonical form parses back to the same reference.
    auto again = parse_reference(ref.value().str());
    ASSERT_TRUE(again.ok()) << c.canonical;
    EXPECT_EQ(again.value(), ref.value()) << c.canonical;
  }
}

TEST(Reference, TagAndDigestParsesAsDigest) {
  auto ref = parse_reference("ghcr.io/o/a:v1@" + k_digest);
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref.value().tag, "v1");
  EXPECT_EQ(ref.value().identifier(), k_digest);
  EXPECT_EQ(ref.value().str(), "ghcr.io/o/a@" + k_digest);
}

TEST(Reference, DefaultsAreExplicitOptions) {
  ReferenceDefaults defaults;
  defaults.registry = "127.0.0.1:5000";
  defaults.tag = "stable";
  auto ref = parse_reference("o/a", defaults);
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref.value().str(), "127.0.0.1:5000/o/a:stable");
}

TEST(Reference, PinnedDropsTheTagAndKeepsTheRepository) {
  auto ref = parse_reference("127.0.0.1:5000/o/a:v1").value();
  auto pinned = ref.pinned(Digest::parse(k_digest).value());
  EXPECT_EQ(pinned.str(), "127.0.0.1:5000/o/a@" + k_digest);
  EXPECT_EQ(pinned.tag, std::nullopt);
}

TEST(Reference, RejectsEveryBadReferenceNamingTheRule) {
  struct Bad {
    std::string input;
    std::string why;
  };
  const std::vector<Bad> cases = {
      {"", "the reference is empty"},
      {"UPPER/case",
       "repository component 'UPPER' must match [a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"},
      {"a//b", "empty path component (leading, trailing or double '/')"},
      {"/a", "empty path component (leading, trailing or double '/')"},
      {"a/", "empty path component (leading, trailing or double '/')"},
      {"name@sha256:short", "bad digest: expected 64 hex characters after 'sha256:', got 5"},
      {"name@", "bad digest: the digest is empty"},
      {"name@md5:abc", "bad digest: unsupported algorithm 'md5' (only sha256)"},
      {"name:", "empty tag after ':'"},
      {"name:-x", "tag '-x' must match [A-Za-z0-9_][A-Za-z0-9._-]{0,127}"},
      {"name:.x", "tag '.x' must match [A-Za-z0-9_][A-Za-z0-9._-]{0,127}"},
      {"name:" + std::string(129, 't'),
       "tag '" + std::string(129, 't') + "' must match [A-Za-z0-9_][A-Za-z0-9._-]{0,127}"},
      {"../etc/passwd", "path component '..' is not allowed (path traversal)"},
      {"a/../b", "path component '..' is not allowed (path traversal)"},
      {"ghcr.io/./a", "path component '.' is not allowed (path traversal)"},
      {"caf\xc3\xa9/a", "non-ASCII byte at position 3"},
      {"a b", "whitespace or control character at position 1"},
      {"a\tb", "whitespace or control character at position 1"},
      {"a-/b", "repository component 'a-' must match [a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"},
      {"a___b", "repository component 'a___b' must match [a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"},
      {"a..b", "repository component 'a..b' must match [a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"},
      {"ghcr.io/", "empty path component (leading, trailing or double '/')"},
      {"bad_host.io/a",
       "registry 'bad_host.io' must be a host name or address with an optional :port"},
      {"host:port/a", "registry 'host:port' has port 'port'; a port is a number from 1 to 65535"},
      // Issue 27: ports outside 1-65535 are refused here, not later as a curl URL error.
      {"127.0.0.1:0/a", "registry '127.0.0.1:0' has port '0'; a port is a number from 1 to 65535"},
      {"127.0.0.1:65536/a",
       "registry '127.0.0.1:65536' has port '65536'; a port is a number from 1 to 65535"},
      {"127.0.0.1:99999/a",
       "registry '127.0.0.1:99999' has port '99999'; a port is a number from 1 to 65535"},
      {"127.0.0.1:000000/a",
       "registry '127.0.0.1:000000' has port '000000'; a port is a number from 1 to 65535"},
      {"localhost:/a", "registry 'localhost:' has port ''; a port is a number from 1 to 65535"},
      {"localhost:-1/a",
       "registry 'localhost:-1' has port '-1'; a port is a number from 1 to 65535"},
      {"[::1]:0/a", "registry '[::1]:0' has port '0'; a port is a number from 1 to 65535"},
      {"[::1/a", "registry '[::1' opens '[' without the closing ']' of an IPv6 address"},
      {"[::g]:5000/a",
       "registry '[::g]:5000' must be a host name or address with an optional :port"},
      {"[127.0.0.1]/a",
       "registry '[127.0.0.1]' must be a host name or address with an optional :port"},
      {"[::1]x/a", "registry '[::1]x' must be a host name or address with an optional :port"},
      {"-host.io/a", "registry '-host.io' must be a host name or address with an optional :port"},
      {":tag", "missing the repository name"},
      {std::string(256, 'a'), "repository is longer than 255 characters"},
  };
  for (const auto& c : cases) {
    auto ref = parse_reference(c.input);
    ASSERT_FALSE(ref.ok()) << c.input << " parsed as " << ref.value().str();
    EXPECT_EQ(ref.error().message(), "invalid image reference '" + c.input + "': " + c.why)
        << c.input;
    EXPECT_EQ(ref.error().category(), ErrorCategory::usage) << c.input;
    EXPECT_EQ(ref.error().hint(), k_hint) << c.input;
  }
}

} // namespace
} // namespace lume_unlock::oci

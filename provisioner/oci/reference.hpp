#pragma once

#include "util/result.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::oci {

/// A content digest: algorithm sha256 and 64 lower-case hex characters. Valid by construction:
/// the only ways to get one are parse() and of_bytes()/from_sha256_hex(), which check.
class Digest {
public:
  /// Parses "sha256:<64 lower-case hex>". Fails (category usage) naming the input and the rule.
  static Result<Digest> parse(std::string_view text);
  /// The digest of a byte string.
  static Digest of_bytes(std::string_view bytes);
  /// Wraps 64 lower-case hex characters (e.g. from util::Sha256); fails like parse().
  static Result<Digest> from_sha256_hex(std::string_view hex);

  static constexpr const char* algorithm() { return "sha256"; }
  const std::string& hex() const { return m_hex; }
  /// "sha256:<hex>".
  std::string str() const { return std::string(algorithm()) + ":" + m_hex; }

  friend bool operator==(const Digest& a, const Digest& b) { return a.m_hex == b.m_hex; }
  friend bool operator!=(const Digest& a, const Digest& b) { return !(a == b); }
  friend bool operator<(const Digest& a, const Digest& b) { return a.m_hex < b.m_hex; }

private:
  explicit Digest(std::string hex) : m_hex(std::move(hex)) {}
  std::string m_hex;
};

/// Explicit defaults for parse_reference (go-containerregistry's pkg/name does the same).
struct ReferenceDefaults {
  /// Used when the first path component is not a registry (no '.', no ':', not "localhost").
  std::string registry = "ghcr.io";
  /// Used when the reference names neither a tag nor a digest.
  std::string tag = "latest";
};

/// An image reference `[registry/]repository[:tag][@sha256:...]`, always fully qualified after
/// parsing. When both a tag and a digest are given the digest decides what is fetched; the tag
/// is kept only for display.
struct Reference {
  std::string registry;   ///< "ghcr.io", "127.0.0.1:5000", "localhost"
  std::string repository; ///< "trycua/macos-tahoe-cua"
  std::optional<std::string> tag;
  std::optional<Digest> digest;

  /// What to put after /manifests/: the digest when there is one, else the tag.
  std::string identifier() const;
  /// "registry/repository".
  std::string repository_path() const { return registry + "/" + repository; }
  /// The canonical form: "registry/repository@sha256:..." when a digest is known, else
  /// "registry/repository:tag".
  std::string str() const;
  /// A copy pinned to `digest` (the tag is dropped: the digest is what counts).
  Reference pinned(const Digest& digest) const;

  friend bool operator==(const Reference& a, const Reference& b) {
    return a.registry == b.registry && a.repository == b.repository && a.tag == b.tag &&
           a.digest == b.digest;
  }
};

/// Parses an image reference. Fails with category usage; the message quotes the input and
/// names the rule that was broken (component grammar, tag grammar, digest, traversal, ...).
Result<Reference> parse_reference(std::string_view text, const ReferenceDefaults& defaults = {});

} // namespace lume_unlock::oci

#pragma once

#include "oci/reference.hpp"
#include "util/result.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace lume_unlock::fetch {

/// Where the bytes of one artifact come from (a recipe's install item, issue 24).
struct ArtifactSource {
  enum class Kind { https, oci, file };
  Kind kind = Kind::https;
  /// The https URL as written, the OCI reference without its scheme
  /// ("REGISTRY/REPO@sha256:<hex>") or the resolved host path.
  std::string text;
  /// For Kind::oci: the parsed reference, always pinned by digest.
  oci::Reference reference;

  friend bool operator==(const ArtifactSource& a, const ArtifactSource& b) {
    return a.kind == b.kind && a.text == b.text;
  }
};

/// Longest source text accepted; real release and model-hub URLs stay far below it.
constexpr std::size_t k_max_source_length = 2048;

/// Parses an `https://HOST/PATH` URL. Fails (category usage) with a message that a recipe parser
/// can prefix with "file:line:col: install[0].url: ": empty, longer than k_max_source_length,
/// whitespace or control characters, `http://` (TLS only), any other or no scheme, no host, and
/// user information ("user:password@"; credentials never belong in a recipe; the message shows
/// the URL with them removed).
Result<ArtifactSource> parse_https_source(std::string_view url);

/// Parses `oci://REGISTRY/REPO@sha256:<hex>`, a blob pinned by digest. A tag (with or without a
/// digest) is refused: the artifact must not move under the recipe. Fails like
/// parse_https_source.
Result<ArtifactSource> parse_oci_source(std::string_view text);

/// What a recipe's `url:` field holds: dispatches on the scheme to parse_oci_source for
/// `oci://` and to parse_https_source for everything else (which refuses what is not https).
Result<ArtifactSource> parse_url_source(std::string_view url);

/// A host file (already resolved by the caller, e.g. relative to the recipe). Not checked here:
/// fetch_artifact reports a missing or unreadable file.
ArtifactSource file_source(std::string path);

/// The source for messages and records: the URL redacted (util::redact_url), "oci://<ref>", or
/// the host path.
std::string describe(const ArtifactSource& source);

} // namespace lume_unlock::fetch

#pragma once

#include "oci/reference.hpp"
#include "util/result.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

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

/// Where to fetch an https source from instead of its publisher, for air-gapped and proxied
/// sites: rules "FROM=TO", each FROM an https URL prefix ("https://github.com/") and TO the
/// prefix that replaces it ("https://mirror.example/github/"). The recipe, the pinned digests,
/// the cache key and the provenance keep the publisher's URL; only the request goes elsewhere,
/// and the bytes are verified the same way.
class MirrorMap {
public:
  struct Rule {
    std::string from;
    std::string to;
  };

  /// Rules from `LUME_UNLOCK_MIRROR` (whitespace-separated FROM=TO rules) and `HF_ENDPOINT`
  /// (Hugging Face's own variable: https://huggingface.co/ → its value), then `extra` (the
  /// --mirror options). Fails (usage) naming the variable or option and the rule.
  static Result<MirrorMap> from_environment(const std::vector<std::string>& extra = {});

  /// Adds one "FROM=TO" rule; `origin` names where it came from in errors. Both sides must be
  /// https:// URLs with a host and end in '/', so a rule never splices a host name.
  Status add(std::string_view rule, const std::string& origin);

  /// `url` with the longest matching FROM replaced by its TO; `url` itself when none matches.
  std::string apply(const std::string& url) const;

  const std::vector<Rule>& rules() const { return m_rules; }

private:
  std::vector<Rule> m_rules;
};

} // namespace lume_unlock::fetch

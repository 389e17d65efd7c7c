#include "artifact_source.hpp"

#include "util/http_client.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

namespace lume_unlock::fetch {

namespace {

constexpr std::string_view k_https = "https://";
constexpr std::string_view k_oci = "oci://";
constexpr const char* k_forms = "use https://…, oci://REGISTRY/REPO@sha256:<hex> or a host file";

Error bad(std::string why, std::string hint = {}) {
  return Error(ErrorCategory::usage, "", std::move(why), std::move(hint));
}

std::string quoted(std::string_view text) {
  return util::quote_for_message(text);
}

/// The checks every source text gets, whatever its scheme.
std::optional<Error> text_problem(std::string_view text) {
  if (text.empty()) {
    return bad("must not be empty", k_forms);
  }
  if (text.size() > k_max_source_length) {
    return bad("is " + std::to_string(text.size()) + " characters long; the limit is " +
               std::to_string(k_max_source_length));
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte <= 0x20 || byte == 0x7f) {
      return bad(quoted(text) + " contains a space or control character at byte " +
                     std::to_string(i),
                 "percent-encode it (a space is %20)");
    }
  }
  return std::nullopt;
}

using util::starts_with;

} // namespace

Result<ArtifactSource> parse_https_source(std::string_view url) {
  if (auto problem = text_problem(url)) {
    return *problem;
  }
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    return bad(quoted(url) + " is not a URL (no scheme)", k_forms);
  }
  const std::string_view scheme = url.substr(0, scheme_end);
  if (scheme == "http") {
    return bad(quoted(util::redact_url(url)) +
                   " is plain HTTP; artifacts are fetched over TLS only",
               "use " + quoted("https" + util::redact_url(url).substr(4)));
  }
  if (!starts_with(url, k_https)) {
    return bad(quoted(util::redact_url(url)) + " has the scheme " + quoted(scheme) +
                   "; only https:// and oci:// are fetched",
               k_forms);
  }
  const std::string_view rest = url.substr(k_https.size());
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string_view::npos) {
    return bad(quoted(util::redact_url(url)) +
                   " carries user information before the host; credentials never belong in a "
                   "recipe",
               "remove the 'user:password@' part");
  }
  if (authority.empty() || authority.front() == ':') {
    return bad(quoted(url) + " has no host");
  }
  ArtifactSource source;
  source.kind = ArtifactSource::Kind::https;
  source.text = std::string(url);
  return source;
}

Result<ArtifactSource> parse_oci_source(std::string_view text) {
  if (auto problem = text_problem(text)) {
    return *problem;
  }
  if (!starts_with(text, k_oci)) {
    return bad(quoted(text) + " is not an oci:// reference",
               "write oci://REGISTRY/REPO@sha256:<hex>");
  }
  auto parsed = oci::parse_reference(text.substr(k_oci.size()));
  if (!parsed) {
    return bad(parsed.error().message(), "write oci://REGISTRY/REPO@sha256:<hex>");
  }
  oci::Reference reference = std::move(parsed).value();
  if (!reference.digest) {
    return bad(quoted(text) + " is not pinned by digest; a tag can move under the recipe",
               "write oci://" + reference.repository_path() + "@sha256:<hex>");
  }
  if (reference.tag) {
    return bad(quoted(text) + " names the tag " + quoted(*reference.tag) +
                   " beside the digest; the digest alone pins the artifact",
               "write oci://" + reference.repository_path() + "@" + reference.digest->str());
  }
  ArtifactSource source;
  source.kind = ArtifactSource::Kind::oci;
  source.text = reference.str();
  source.reference = std::move(reference);
  return source;
}

Result<ArtifactSource> parse_url_source(std::string_view url) {
  if (starts_with(url, k_oci)) {
    return parse_oci_source(url);
  }
  return parse_https_source(url);
}

ArtifactSource file_source(std::string path) {
  ArtifactSource source;
  source.kind = ArtifactSource::Kind::file;
  source.text = std::move(path);
  return source;
}

std::string describe(const ArtifactSource& source) {
  switch (source.kind) {
  case ArtifactSource::Kind::https:
    return util::redact_url(source.text);
  case ArtifactSource::Kind::oci:
    return std::string(k_oci) + source.text;
  case ArtifactSource::Kind::file:
    break;
  }
  return source.text;
}

} // namespace lume_unlock::fetch

#include "fetch/fetch.hpp"
#include "util/http_client.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <cstdlib>
#include <sstream>

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

constexpr const char* k_example = "https://github.com/=https://mirror.example/github/";

/// An https:// URL with a host, ending in '/'.
bool is_prefix_url(const std::string& text) {
  constexpr std::string_view scheme = "https://";
  return text.size() > scheme.size() + 1 && text.compare(0, scheme.size(), scheme) == 0 &&
         text[scheme.size()] != '/' && text.back() == '/' &&
         text.find_first_of(" \t\r\n@") == std::string::npos;
}

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

Status MirrorMap::add(std::string_view rule, const std::string& origin) {
  const auto equals = rule.find("=https://");
  const std::string from(rule.substr(0, equals == std::string_view::npos ? rule.size() : equals));
  const std::string to(equals == std::string_view::npos ? "" : rule.substr(equals + 1));
  if (!is_prefix_url(from) || !is_prefix_url(to)) {
    // Each side redacted: a mirror URL may carry credentials, which are refused, never shown.
    const std::string shown =
        util::redact_url(from) +
        (equals == std::string_view::npos ? std::string() : "=" + util::redact_url(to));
    return Error(ErrorCategory::usage,
                 origin,
                 util::quote_for_message(shown) +
                     " is not a mirror rule FROM=TO of two https:// prefixes ending in '/'",
                 std::string("for example ") + k_example);
  }
  m_rules.push_back({from, to});
  return ok_status();
}

std::string MirrorMap::apply(const std::string& url) const {
  const Rule* best = nullptr;
  for (const Rule& rule : m_rules) {
    if (url.compare(0, rule.from.size(), rule.from) == 0 &&
        (best == nullptr || rule.from.size() > best->from.size())) {
      best = &rule;
    }
  }
  return best == nullptr ? url : best->to + url.substr(best->from.size());
}

Result<MirrorMap> MirrorMap::from_environment(const std::vector<std::string>& extra) {
  MirrorMap map;
  if (const char* endpoint = std::getenv("HF_ENDPOINT"); endpoint != nullptr && *endpoint) {
    std::string to = endpoint;
    if (to.back() != '/') {
      to += '/';
    }
    LUME_UNLOCK_TRY(map.add("https://huggingface.co/=" + to, "HF_ENDPOINT"));
  }
  if (const char* rules = std::getenv("LUME_UNLOCK_MIRROR"); rules != nullptr) {
    std::istringstream words(rules);
    std::string rule;
    while (words >> rule) {
      LUME_UNLOCK_TRY(map.add(rule, "LUME_UNLOCK_MIRROR"));
    }
  }
  for (const std::string& rule : extra) {
    LUME_UNLOCK_TRY(map.add(rule, "--mirror"));
  }
  return map;
}

} // namespace lume_unlock::fetch

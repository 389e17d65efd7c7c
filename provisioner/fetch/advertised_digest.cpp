#include "fetch/advertised_digest.hpp"

#include "util/download_parts.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

namespace lume_unlock::fetch {

std::optional<AdvertisedDigest> read_advertised_digest(const util::HttpResponse& response) {
  std::string etag = response.header("X-Linked-Etag").value_or("");
  if (util::starts_with(etag, "W/")) {
    etag.erase(0, 2);
  }
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  const auto size = util::parse_decimal(response.header("X-Linked-Size").value_or(""));
  // Files stored without LFS carry a git blob id (40 hex) there: not a SHA-256 of the bytes.
  if (!util::is_sha256_hex(etag) || !size) {
    return std::nullopt;
  }
  return AdvertisedDigest{etag, *size};
}

std::optional<AdvertisedDigest> advertised_digest(const ArtifactSource& source,
                                                  const FetchServices& services) {
  if (source.kind != ArtifactSource::Kind::https) {
    return std::nullopt;
  }
  util::HttpRequest request{"HEAD", services.mirrors.apply(source.text)};
  request.https_only = true;
  request.follow_redirects = false;
  if (is_hugging_face_url(source.text)) {
    request.bearer_token = services.hugging_face_token;
  }
  auto response = services.http.send(request);
  if (!response || response.value().status < 200 || response.value().status >= 400) {
    return std::nullopt;
  }
  return read_advertised_digest(response.value());
}

} // namespace lume_unlock::fetch

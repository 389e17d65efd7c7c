#pragma once

#include "fetch/artifact_fetch.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace lume_unlock::fetch {

/// What a publisher says of a file before sending it.
struct AdvertisedDigest {
  std::string sha256; ///< 64 lower-case hex
  std::uint64_t size = 0;
};

/// Reads X-Linked-Etag (the SHA-256 in quotes) and X-Linked-Size: Hugging Face's resolve
/// redirect carries both (docs/sources.md). nullopt unless both are there and well-formed.
std::optional<AdvertisedDigest> read_advertised_digest(const util::HttpResponse& response);

/// One HEAD of an https source (through the mirror map, HF_TOKEN for Hugging Face, redirects not
/// followed: the resolver answers, the CDN is not asked): the digest and size its publisher
/// advertises, so `lock` pins a 7 GB model without downloading it. nullopt when the source
/// advertises none or the request fails (the caller downloads instead; a fetch always verifies
/// the bytes against the pin).
std::optional<AdvertisedDigest> advertised_digest(const ArtifactSource& source,
                                                  const FetchServices& services);

} // namespace lume_unlock::fetch

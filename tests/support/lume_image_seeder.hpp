#pragma once

#include "oci/manifest.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "util/result.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace lume_unlock::test {

/// What to put into a seeded Lume-format image (reference/lume-oci.md §3.1). The defaults make
/// a small image; the contents are deterministic for a given `seed`, so digests are stable.
struct LumeImageSpec {
  std::uint64_t disk_bytes = 3 * 1024 * 1024 + 4321; ///< raw disk.img size
  std::uint64_t chunk_bytes = 0;                     ///< 0: the whole disk as one chunk
  std::uint64_t nvram_bytes = 64 * 1024;
  std::uint32_t seed = 1;
  std::string upload_time = "2026-08-12T09:30:00Z";
  int cpu_count = 4;
  std::uint64_t memory_bytes = 8ull << 30;
};

/// A Lume-format image as pushed: the bytes of every part, the manifest and its digest.
struct SeededLumeImage {
  oci::Reference reference; ///< as tagged
  oci::Digest digest = oci::Digest::of_bytes("");
  std::string manifest_bytes;
  oci::Manifest manifest;
  std::string config_bytes;
  std::string nvram;
  std::string disk;                     ///< raw disk.img
  std::vector<std::string> disk_chunks; ///< gzip of each slice, in part order
};

/// Builds the image in memory (config blob `application/vnd.trycua.lume.config.v1+json`,
/// nvram layer, gzip disk chunks with the org.trycua.lume.part.* and content.uncompressed-*
/// annotations, manifest annotations) and pushes it with OUR registry client under ref's tag.
Result<SeededLumeImage> seed_lume_image(oci::RegistryClient& client,
                                        const oci::Reference& ref,
                                        const LumeImageSpec& spec = {});

/// gzip (RFC 1952, zlib default level, no timestamp) of `bytes`.
std::string gzip_bytes(const std::string& bytes);

} // namespace lume_unlock::test

#include "support/lume_image_seeder.hpp"

#include "oci/manifest.hpp"

#include <nlohmann/json.hpp>

#include <zlib.h>

#include <random>
#include <stdexcept>

namespace lume_unlock::test {

namespace {

/// Pseudo-random bytes with zero runs, so gzip has something to do and chunks differ.
std::string make_bytes(std::uint64_t size, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(size, '\0');
  for (std::uint64_t i = 0; i < size; i += 4096) {
    const bool zero_block = (rng() % 3) == 0;
    for (std::uint64_t j = i; j < std::min(size, i + 4096); ++j) {
      out[j] = zero_block ? '\0' : static_cast<char>(rng() & 0x3f); // 6-bit values compress a bit
    }
  }
  return out;
}

} // namespace

std::string gzip_bytes(const std::string& bytes) {
  z_stream stream{};
  // 15 + 16: a gzip wrapper; zlib writes mtime 0 when no header is set, so output is stable.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, bytes.size()) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) {
    throw std::runtime_error("deflate did not finish");
  }
  out.resize(stream.total_out);
  return out;
}

Result<SeededLumeImage>
seed_lume_image(oci::RegistryClient& client, const oci::Reference& ref, const LumeImageSpec& spec) {
  namespace mt = oci::media_type;
  namespace an = oci::annotation;
  SeededLumeImage image;
  image.reference = ref;
  image.nvram = make_bytes(spec.nvram_bytes, spec.seed * 7 + 1);
  image.disk = make_bytes(spec.disk_bytes, spec.seed * 7 + 2);
  image.config_bytes = nlohmann::json{{"hardwareModel", "aGFyZHdhcmUtbW9kZWw="},
                                      {"machineIdentifier", "bWFjaGluZS1pZA=="},
                                      {"mediatype", mt::lume_config},
                                      {"os", "macOS"},
                                      {"storage",
                                       {{{"file", "nvram.bin"}, {"mediatype", mt::lume_nvram}},
                                        {{"file", "disk.img"}, {"mediatype", mt::lume_disk}}}}}
                           .dump();

  auto config = client.push_blob_bytes(ref, image.config_bytes, mt::lume_config);
  if (!config) {
    return config.error();
  }
  config.value().annotations[an::title] = "config.json";
  auto nvram = client.push_blob_bytes(ref, image.nvram, mt::lume_nvram);
  if (!nvram) {
    return nvram.error();
  }
  nvram.value().annotations[an::title] = "nvram.bin";

  oci::Manifest& m = image.manifest;
  m.media_type = mt::oci_manifest;
  m.config = config.value();
  m.layers.push_back(nvram.value());
  const std::uint64_t chunk = spec.chunk_bytes == 0 ? spec.disk_bytes : spec.chunk_bytes;
  const std::uint64_t parts = (spec.disk_bytes + chunk - 1) / chunk;
  for (std::uint64_t part = 0; part < parts; ++part) {
    const std::uint64_t offset = part * chunk;
    const std::string slice = image.disk.substr(offset, chunk);
    image.disk_chunks.push_back(gzip_bytes(slice));
    auto layer = client.push_blob_bytes(ref, image.disk_chunks.back(), mt::lume_disk);
    if (!layer) {
      return layer.error();
    }
    layer.value().annotations = {
        {an::title, "disk.img.part." + std::to_string(part)},
        {an::lume_chunk_size, std::to_string(slice.size())},
        {an::lume_uncompressed_digest, oci::Digest::of_bytes(slice).str()},
        {an::lume_uncompressed_size, std::to_string(slice.size())},
        {an::lume_part_number, std::to_string(part)},
        {an::lume_part_offset, std::to_string(offset)},
        {an::lume_part_total, std::to_string(parts)},
    };
    m.layers.push_back(layer.value());
  }
  m.annotations = {
      {an::lume_upload_time, spec.upload_time},
      {an::lume_total_uncompressed_size, std::to_string(spec.disk_bytes)},
      {an::lume_os, "macOS"},
      {an::lume_cpu_count, std::to_string(spec.cpu_count)},
      {an::lume_memory_size, std::to_string(spec.memory_bytes)},
      {an::lume_disk_size, std::to_string(spec.disk_bytes)},
      {an::lume_display, "1024x768"},
      {an::lume_network_mode, "nat"},
  };
  image.manifest_bytes = oci::serialize(m);
  auto digest = client.push_manifest(ref, image.manifest_bytes, mt::oci_manifest);
  if (!digest) {
    return digest.error();
  }
  image.digest = digest.value();
  return image;
}

} // namespace lume_unlock::test

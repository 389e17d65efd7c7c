// lume-sim's pull: Lume 0.5.3's OCI-format pull (reference/lume-oci.md §2.2-§2.3, §3.1, §4.3).
#include "registry_http.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <vector>

namespace lume_sim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// The string members of the object j[key] (annotations); others are left out.
std::map<std::string, std::string> string_entries(const json& j, const char* key) {
  std::map<std::string, std::string> out;
  if (j.contains(key) && j[key].is_object()) {
    for (auto it = j[key].begin(); it != j[key].end(); ++it) {
      if (it->is_string()) {
        out[it.key()] = *it;
      }
    }
  }
  return out;
}

struct Layer {
  std::string media_type;
  std::string digest;
  std::uint64_t size = 0;
  std::map<std::string, std::string> annotations;
  std::string annotation(const std::string& key) const {
    auto it = annotations.find(key);
    return it == annotations.end() ? std::string() : it->second;
  }
};

/// Swift's JSONDecoder into Lume's Manifest struct: mediaType and layers mandatory.
Layer layer_from(const json& j) {
  if (!j.is_object() || !j.contains("mediaType") || !j["mediaType"].is_string() ||
      !j.contains("digest") || !j["digest"].is_string() || !j.contains("size") ||
      !j["size"].is_number_unsigned()) {
    throw RegistryFailure(k_manifest_failure);
  }
  return Layer{j["mediaType"], j["digest"], j["size"], string_entries(j, "annotations")};
}

std::uint64_t number_or(const std::string& text, std::uint64_t fallback) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    return fallback;
  }
  return std::stoull(text);
}

/// downloadLayer (§2.3): the whole blob, SHA-256 checked, up to 5 attempts.
std::string download_blob(httplib::Client& c,
                          const std::string& repository,
                          const std::string& token,
                          const Layer& layer) {
  std::string last_error;
  for (int attempt = 1; attempt <= 5; ++attempt) {
    std::string body;
    Sha256 hash;
    auto r = c.Get(
        "/v2/" + repository + "/blobs/" + layer.digest,
        with_auth({{"Accept", layer.media_type}, {"Accept-Encoding", "identity"}}, token, false),
        [&](const char* data, std::size_t n) {
          body.append(data, n);
          hash.update(data, n);
          return true;
        });
    if (!r || r->status != 200) {
      last_error = "Failed to download layer " + layer.digest;
      continue;
    }
    const std::string actual = hash.finish();
    if (layer.digest.rfind("sha256:", 0) == 0 && actual != layer.digest) {
      last_error = "Layer verification failed: expected " + layer.digest + ", got " + actual;
      continue;
    }
    return body;
  }
  throw RegistryFailure(last_error);
}

/// gunzip into `fd` at `offset`, skipping all-zero blocks (the file stays sparse). Returns
/// whether anything was written (false: the chunk is all zeros).
bool gunzip_at(const std::string& gz, int fd, std::uint64_t offset) {
  static const std::vector<char> k_zeros(4 << 20, 0);
  bool wrote = false;
  z_stream s{};
  if (inflateInit2(&s, 15 + 16) != Z_OK) {
    throw RegistryFailure("gunzip failed");
  }
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  s.avail_in = static_cast<uInt>(gz.size());
  std::vector<char> block(4 << 20);
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    s.next_out = reinterpret_cast<Bytef*>(block.data());
    s.avail_out = static_cast<uInt>(block.size());
    rc = inflate(&s, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&s);
      throw RegistryFailure("gunzip failed: corrupt disk chunk");
    }
    const std::size_t n = block.size() - s.avail_out;
    if (n > 0 && std::memcmp(block.data(), k_zeros.data(), n) != 0) {
      if (pwrite(fd, block.data(), n, static_cast<off_t>(offset)) != static_cast<ssize_t>(n)) {
        inflateEnd(&s);
        throw RegistryFailure("cannot write disk.img");
      }
      wrote = true;
    }
    offset += n;
  }
  inflateEnd(&s);
  return wrote;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    throw RegistryFailure("cannot write " + path.string());
  }
}

/// The manifest as Lume's pull reads it: the digest from Docker-Content-Digest, the optional
/// config and nvram layers, the disk chunks in part order.
struct PullManifest {
  std::string digest;
  std::optional<Layer> config;
  std::optional<Layer> nvram;
  std::vector<Layer> disk;
  std::map<std::string, std::string> annotations;
  std::string annotation(const char* key) const {
    auto it = annotations.find(key);
    return it == annotations.end() ? std::string() : it->second;
  }
};

/// fetchManifest (§2.2): only the OCI manifest type is accepted; the digest comes only from
/// Docker-Content-Digest and is never recomputed.
PullManifest fetch_manifest(httplib::Client& c,
                            const std::string& repository,
                            const std::string& tag,
                            const std::string& token) {
  auto r = c.Get("/v2/" + repository + "/manifests/" + tag,
                 with_auth({{"Accept", k_manifest_type}}, token, false));
  if (!r || r->status != 200 || !r->has_header("Docker-Content-Digest")) {
    throw RegistryFailure(k_manifest_failure);
  }
  PullManifest pulled;
  pulled.digest = r->get_header_value("Docker-Content-Digest");
  json m = json::parse(r->body, nullptr, false);
  if (!m.is_object() || !m.contains("mediaType") || !m["mediaType"].is_string() ||
      !m.contains("layers") || !m["layers"].is_array()) {
    throw RegistryFailure(k_manifest_failure);
  }
  if (m.contains("config") && !m["config"].is_null()) {
    pulled.config = layer_from(m["config"]);
  }
  bool oci_format = pulled.config && pulled.config->media_type == k_config_type;
  for (const json& j : m["layers"]) {
    Layer l = layer_from(j);
    if (l.media_type == k_disk_type) {
      pulled.disk.push_back(l);
      oci_format = true;
    } else if (l.media_type == k_nvram_type) {
      pulled.nvram = l;
    }
  }
  if (!oci_format) {
    throw RegistryFailure("lume-sim: legacy-format images (LZ4 chunks) are not simulated");
  }
  pulled.annotations = string_entries(m, "annotations");
  std::stable_sort(pulled.disk.begin(), pulled.disk.end(), [](const Layer& a, const Layer& b) {
    return number_or(a.annotation("org.trycua.lume.part.number"), 0) <
           number_or(b.annotation("org.trycua.lume.part.number"), 0);
  });
  return pulled;
}

/// disk.img of `size` bytes from the disk chunks, each unique blob downloaded once in digest
/// order (#3066: a digest may appear at several offsets); `advance` after each blob.
void write_disk(httplib::Client& c,
                const std::string& repository,
                const std::string& token,
                const std::vector<Layer>& disk,
                const fs::path& path,
                std::uint64_t size,
                const std::function<void(std::uint64_t)>& advance) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) {
    if (fd >= 0)
      close(fd);
    throw RegistryFailure("cannot create disk.img");
  }
  std::set<std::string> unique;
  for (const Layer& l : disk) {
    unique.insert(l.digest);
  }
  try {
    for (const std::string& digest : unique) {
      const Layer& first = *std::find_if(
          disk.begin(), disk.end(), [&](const Layer& l) { return l.digest == digest; });
      const std::string gz = download_blob(c, repository, token, first);
      for (const Layer& l : disk) {
        if (l.digest == digest) {
          // A missing offset means 0 (§3.1), so a producer must set it. An all-zero chunk
          // leaves the sparse file as it is, so its repeats (typically most of a disk) need no
          // second gunzip: the result is the same as Lume's writing them.
          if (!gunzip_at(gz, fd, number_or(l.annotation("org.trycua.lume.part.offset"), 0))) {
            break;
          }
        }
      }
      advance(first.size);
    }
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
}

/// config.json synthesized from the config blob's keys and the manifest's annotations; then a
/// random MAC.
json vm_config_of(const PullManifest& m, json from_blob, std::uint64_t disk_size) {
  json vm_config = json::object();
  if (from_blob.is_object()) {
    for (const char* key : {"os", "hardwareModel", "machineIdentifier"}) {
      if (from_blob.contains(key) && from_blob[key].is_string()) {
        vm_config[key] = from_blob[key];
      }
    }
  }
  if (!vm_config.contains("os")) {
    const std::string os = m.annotation("org.trycua.lume.os");
    vm_config["os"] = os.empty() ? "macOS" : os;
  }
  if (!m.annotation("org.trycua.lume.cpu-count").empty()) {
    vm_config["cpuCount"] = number_or(m.annotation("org.trycua.lume.cpu-count"), 0);
  }
  if (!m.annotation("org.trycua.lume.memory-size").empty()) {
    vm_config["memorySize"] = number_or(m.annotation("org.trycua.lume.memory-size"), 0);
  }
  vm_config["diskSize"] = number_or(m.annotation("org.trycua.lume.disk-size"), disk_size);
  const std::string display = m.annotation("org.trycua.lume.display");
  vm_config["display"] = display.empty() ? "1920x1080" : display;
  const std::string network = m.annotation("org.trycua.lume.network-mode");
  vm_config["networkMode"] = network.empty() ? "nat" : network;
  vm_config["macAddress"] = random_mac_address();
  return vm_config;
}

} // namespace

std::string pull_oci_image(const RegistryEndpoint& registry,
                           const std::string& repository,
                           const std::string& tag,
                           const fs::path& staging,
                           const std::function<void(double)>& progress,
                           std::chrono::milliseconds pace) {
  auto c = client_for(registry);
  const std::string token =
      token_for(*c, registry, repository, "pull", push_credentials_from_environment());
  const PullManifest m = fetch_manifest(*c, repository, tag, token);
  std::uint64_t total_bytes = (m.config ? m.config->size : 0) + (m.nvram ? m.nvram->size : 0);
  std::set<std::string> unique;
  for (const Layer& l : m.disk) {
    if (unique.insert(l.digest).second) {
      total_bytes += l.size;
    }
  }
  const std::size_t steps = 2 + unique.size();
  std::uint64_t done_bytes = 0;
  auto advance = [&](std::uint64_t bytes) {
    done_bytes += bytes;
    progress(total_bytes == 0
                 ? 100.0
                 : 100.0 * static_cast<double>(done_bytes) / static_cast<double>(total_bytes));
    std::this_thread::sleep_for(pace / static_cast<int>(steps));
  };

  json from_blob;
  if (m.config) {
    from_blob = json::parse(download_blob(*c, repository, token, *m.config), nullptr, false);
    advance(m.config->size);
  }
  fs::create_directories(staging);
  if (m.nvram) {
    write_file(staging / "nvram.bin", download_blob(*c, repository, token, *m.nvram));
    advance(m.nvram->size);
  }
  std::uint64_t disk_size = number_or(m.annotation("org.trycua.lume.total-uncompressed-size"), 0);
  if (disk_size == 0) {
    for (const Layer& l : m.disk) {
      disk_size += number_or(l.annotation("org.trycua.lume.content.uncompressed-size"), 0);
    }
  }
  write_disk(*c, repository, token, m.disk, staging / "disk.img", disk_size, advance);
  write_file(staging / "config.json", vm_config_of(m, from_blob, disk_size).dump(2));
  return m.digest;
}

} // namespace lume_sim

// lume-sim's push: Lume 0.5.3's OCI-format push (reference/lume-oci.md §2.4-§2.5, §3.1).
#include "registry_http.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <vector>

namespace lume_sim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// Streaming gzip (zlib default level, no header timestamp, like Lume's pushOCI).
class Gzip {
public:
  Gzip() {
    if (deflateInit2(&m_s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK) {
      throw RegistryFailure("deflateInit2 failed");
    }
  }
  ~Gzip() { deflateEnd(&m_s); }
  void add(const char* data, std::size_t n, bool last) {
    m_s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    m_s.avail_in = static_cast<uInt>(n);
    char buffer[1 << 16];
    do {
      m_s.next_out = reinterpret_cast<Bytef*>(buffer);
      m_s.avail_out = sizeof buffer;
      deflate(&m_s, last ? Z_FINISH : Z_NO_FLUSH);
      m_out.append(buffer, sizeof buffer - m_s.avail_out);
    } while (m_s.avail_out == 0);
  }
  std::string take() { return std::move(m_out); }

private:
  z_stream m_s{};
  std::string m_out;
};

struct Chunk {
  std::string gz;
  std::string gz_digest;
  std::string raw_digest;
  std::uint64_t raw_size = 0;
};

/// gzip of disk.img[offset, offset+size). A slice without data (a hole) is all zeros.
Chunk make_chunk(int fd, std::uint64_t offset, std::uint64_t size) {
  Chunk c;
  c.raw_size = size;
  Gzip gz;
  Sha256 raw;
  std::vector<char> block(4 << 20);
  std::uint64_t done = 0;
  while (done < size) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), size - done));
    if (pread(fd, block.data(), n, static_cast<off_t>(offset + done)) != static_cast<ssize_t>(n)) {
      std::fill(block.begin(), block.begin() + static_cast<long>(n), 0);
    }
    raw.update(block.data(), n);
    done += n;
    gz.add(block.data(), n, done == size);
  }
  if (size == 0) {
    gz.add(nullptr, 0, true);
  }
  c.gz = gz.take();
  c.gz_digest = digest_of(c.gz);
  c.raw_digest = raw.finish();
  return c;
}

bool has_data(int fd, std::uint64_t offset, std::uint64_t size) {
  const off_t data = lseek(fd, static_cast<off_t>(offset), SEEK_DATA);
  return data >= 0 && static_cast<std::uint64_t>(data) < offset + size;
}

/// Foundation-style pretty JSON: sorted keys (std::map order), '/' escaped as "\/".
std::string apple_json(const json& j) {
  std::string out;
  for (char ch : j.dump(2)) {
    if (ch == '/') {
      out += "\\/";
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

std::string upload_time() {
  // Millisecond resolution, strictly increasing within this process: every push gets a new
  // annotation and therefore a new manifest digest, as in Lume.
  static std::mutex mutex;
  static std::int64_t last = 0;
  std::lock_guard<std::mutex> lock(mutex);
  std::int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  ms = std::max(ms, last + 1);
  last = ms;
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[64];
  std::snprintf(buffer,
                sizeof buffer,
                "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                tm.tm_year + 1900,
                tm.tm_mon + 1,
                tm.tm_mday,
                tm.tm_hour,
                tm.tm_min,
                tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buffer;
}

std::string resolve_location(const std::string& location, const std::string& digest) {
  std::string url = location;
  if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0) {
    url = url.substr(url.find('/', url.find("//") + 2)); // same registry: keep the path
  }
  return url + (url.find('?') == std::string::npos ? "?" : "&") + "digest=" + digest;
}

/// One blob, unless the registry has it already (HEAD): a POST opens the upload, a PUT with the
/// digest sends the bytes (Lume's monolithic upload).
void upload_blob(httplib::Client& c,
                 const std::string& repository,
                 const std::string& token,
                 const std::string& bytes,
                 const std::string& digest) {
  auto head = c.Head("/v2/" + repository + "/blobs/" + digest, with_auth({}, token, true));
  if (head && head->status == 200) {
    return;
  }
  auto start = c.Post("/v2/" + repository + "/blobs/uploads/",
                      with_auth({}, token, true),
                      "",
                      "application/octet-stream");
  if (!start || start->status != 202 || !start->has_header("Location")) {
    throw RegistryFailure("Failed to start blob upload for " + digest);
  }
  auto put = c.Put(resolve_location(start->get_header_value("Location"), digest),
                   with_auth({}, token, true),
                   bytes,
                   "application/octet-stream");
  if (!put || put->status != 201) {
    throw RegistryFailure("Failed to upload blob " + digest);
  }
}

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// disk.img as gzip chunks of `chunk_bytes`, each distinct one uploaded once; appends their
/// layers to `layers` and returns the disk's size.
std::uint64_t push_disk(httplib::Client& c,
                        const std::string& repository,
                        const std::string& token,
                        const fs::path& disk_path,
                        std::uint64_t chunk_bytes,
                        json& layers) {
  int fd = open(disk_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw RegistryFailure("cannot read " + disk_path.string());
  }
  struct stat st {};
  fstat(fd, &st);
  const std::uint64_t disk_size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t parts = disk_size == 0 ? 1 : (disk_size + chunk_bytes - 1) / chunk_bytes;
  std::map<std::uint64_t, Chunk> hole_chunks; // by size: all-zero slices compress identically
  std::set<std::string> uploaded;
  try {
    for (std::uint64_t part = 0; part < parts; ++part) {
      const std::uint64_t offset = part * chunk_bytes;
      const std::uint64_t size = std::min(chunk_bytes, disk_size - offset);
      Chunk chunk;
      if (!has_data(fd, offset, size)) {
        auto it = hole_chunks.find(size);
        if (it == hole_chunks.end()) {
          it = hole_chunks.emplace(size, make_chunk(-1, 0, size)).first;
        }
        chunk = it->second;
      } else {
        chunk = make_chunk(fd, offset, size);
      }
      if (uploaded.insert(chunk.gz_digest).second) {
        upload_blob(c, repository, token, chunk.gz, chunk.gz_digest);
      }
      layers.push_back(
          {{"mediaType", k_disk_type},
           {"digest", chunk.gz_digest},
           {"size", chunk.gz.size()},
           {"annotations",
            {{"org.opencontainers.image.title", "disk.img.part." + std::to_string(part)},
             {"org.trycua.lume.chunk.size", std::to_string(size)},
             {"org.trycua.lume.content.uncompressed-digest", chunk.raw_digest},
             {"org.trycua.lume.content.uncompressed-size", std::to_string(size)},
             {"org.trycua.lume.part.number", std::to_string(part)},
             {"org.trycua.lume.part.offset", std::to_string(offset)},
             {"org.trycua.lume.part.total", std::to_string(parts)}}}});
    }
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
  return disk_size;
}

/// The manifest's annotations: a fresh upload time, the disk's size, and the VM's settings.
json image_annotations(const json& vm_config, std::uint64_t disk_size) {
  json annotations = {{"org.trycua.lume.upload-time", upload_time()},
                      {"org.trycua.lume.total-uncompressed-size", std::to_string(disk_size)}};
  if (vm_config.contains("os")) {
    auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
    annotations["org.trycua.lume.os"] = text(vm_config["os"]);
    annotations["org.trycua.lume.cpu-count"] = text(vm_config.value("cpuCount", json(0)));
    annotations["org.trycua.lume.memory-size"] = text(vm_config.value("memorySize", json(0)));
    annotations["org.trycua.lume.disk-size"] = text(vm_config.value("diskSize", json(disk_size)));
    annotations["org.trycua.lume.display"] = text(vm_config.value("display", json("1024x768")));
    annotations["org.trycua.lume.network-mode"] = text(vm_config.value("networkMode", json("nat")));
  }
  return annotations;
}

} // namespace

void push_oci_image(const RegistryEndpoint& registry,
                    const std::pair<std::string, std::string>& credentials,
                    const std::string& repository,
                    const std::vector<std::string>& tags,
                    const fs::path& vm_dir,
                    std::uint64_t chunk_bytes) {
  if (tags.empty()) {
    throw RegistryFailure("At least one tag is required");
  }
  auto c = client_for(registry);
  // Lume aborts a push whose /token request fails (requireAllScopes); docker-registry has no
  // /token realm, so lume-sim goes on anonymously there (a documented difference).
  const std::string token = token_for(*c, registry, repository, "pull,push", credentials);
  json vm_config = json::parse(file_bytes(vm_dir / "config.json"), nullptr, false);
  if (!vm_config.is_object()) {
    vm_config = json::object();
  }

  json config_blob = {{"mediatype", k_config_type},
                      {"os", vm_config.value("os", "macOS")},
                      {"storage",
                       {{{"file", "nvram.bin"}, {"mediatype", k_nvram_type}},
                        {{"file", "disk.img"}, {"mediatype", k_disk_type}}}}};
  for (const char* key : {"hardwareModel", "machineIdentifier"}) {
    if (vm_config.contains(key)) {
      config_blob[key] = vm_config[key];
    }
  }
  const std::string config_bytes = apple_json(config_blob);
  const std::string config_digest = digest_of(config_bytes);
  upload_blob(*c, repository, token, config_bytes, config_digest);
  const std::string nvram_bytes = file_bytes(vm_dir / "nvram.bin");
  const std::string nvram_digest = digest_of(nvram_bytes);
  upload_blob(*c, repository, token, nvram_bytes, nvram_digest);

  json layers = json::array();
  layers.push_back({{"mediaType", k_nvram_type},
                    {"digest", nvram_digest},
                    {"size", nvram_bytes.size()},
                    {"annotations", {{"org.opencontainers.image.title", "nvram.bin"}}}});
  const std::uint64_t disk_size =
      push_disk(*c, repository, token, vm_dir / "disk.img", chunk_bytes, layers);
  json manifest = {{"schemaVersion", 2},
                   {"mediaType", k_manifest_type},
                   {"config",
                    {{"mediaType", k_config_type},
                     {"digest", config_digest},
                     {"size", config_bytes.size()},
                     {"annotations", {{"org.opencontainers.image.title", "config.json"}}}}},
                   {"layers", layers},
                   {"annotations", image_annotations(vm_config, disk_size)}};
  const std::string bytes = apple_json(manifest);
  for (const std::string& tag : tags) {
    auto put = c->Put("/v2/" + repository + "/manifests/" + tag,
                      with_auth({}, token, true),
                      bytes,
                      k_manifest_type);
    if (!put || put->status != 201) {
      throw RegistryFailure("Failed to push manifest for tag " + tag + " (HTTP " +
                            std::to_string(put ? put->status : 0) + ")");
    }
  }
}

} // namespace lume_sim

#include "registry_io.hpp"

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

namespace lume_sim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Media types and annotation keys of Lume's OCI format (lume-oci.md §3.1), spelled out here
// rather than taken from provisioner/oci so the simulator stays independent of our client.
const char* const k_manifest_type = "application/vnd.oci.image.manifest.v1+json";
const char* const k_config_type = "application/vnd.trycua.lume.config.v1+json";
const char* const k_nvram_type = "application/vnd.trycua.lume.nvram.v1";
const char* const k_disk_type = "application/vnd.trycua.lume.disk.v1";
const char* const k_manifest_failure = "Failed to fetch image manifest from registry.";

class Sha256 {
public:
  Sha256() : m_ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    EVP_DigestInit_ex(m_ctx.get(), EVP_sha256(), nullptr);
  }
  void update(const char* data, std::size_t size) { EVP_DigestUpdate(m_ctx.get(), data, size); }
  std::string finish() {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(m_ctx.get(), out, &n);
    static const char* k_hex = "0123456789abcdef";
    std::string hex;
    for (unsigned int i = 0; i < n; ++i) {
      hex.push_back(k_hex[out[i] >> 4]);
      hex.push_back(k_hex[out[i] & 15]);
    }
    return "sha256:" + hex;
  }

private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> m_ctx;
};

std::string digest_of(const std::string& bytes) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  return h.finish();
}

bool is_loopback_host(const std::string& host) {
  const std::string name = host.substr(0, host.rfind(':'));
  return name == "127.0.0.1" || name == "localhost" || name == "[::1]";
}

/// One httplib client per operation (Lume: one URLSession per pull/push), TLS verified like
/// URLSession does against the keychain; here against --registry-ca.
std::unique_ptr<httplib::Client> client_for(const RegistryEndpoint& registry) {
  auto c = std::make_unique<httplib::Client>(registry.base_url);
  c->enable_server_certificate_verification(true);
  if (!registry.ca_file.empty()) {
    c->set_ca_cert_path(registry.ca_file.c_str());
  }
  c->set_connection_timeout(10);
  c->set_read_timeout(60);
  c->set_write_timeout(60);
  c->set_keep_alive(true);
  c->set_decompress(false); // Lume sends Accept-Encoding: identity and gunzips itself
  return c;
}

/// getToken (§2.1): the hard-coded /token realm; any failure means anonymous for pulls.
std::string token_for(httplib::Client& c,
                      const RegistryEndpoint& registry,
                      const std::string& repository,
                      const std::string& scopes,
                      const std::optional<std::pair<std::string, std::string>>& credentials) {
  const std::string path =
      "/token?scope=repository:" + repository + ":" + scopes + "&service=" + registry.host;
  httplib::Headers headers{{"Accept", "application/json"}};
  if (credentials) {
    // Basic auth with the environment's credentials (sent on pulls too when set).
    headers.emplace(
        httplib::make_basic_authentication_header(credentials->first, credentials->second));
  }
  auto r = c.Get(path, headers);
  if (!r || r->status != 200) {
    return "";
  }
  json j = json::parse(r->body, nullptr, false);
  if (j.is_object() && j.contains("token") && j["token"].is_string()) {
    return j["token"];
  }
  if (j.is_object() && j.contains("access_token") && j["access_token"].is_string()) {
    return j["access_token"];
  }
  return "";
}

httplib::Headers with_auth(httplib::Headers headers, const std::string& token, bool always) {
  if (!token.empty() || always) {
    headers.emplace("Authorization", "Bearer " + token);
  }
  return headers;
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
  Layer l{j["mediaType"], j["digest"], j["size"], {}};
  if (j.contains("annotations") && j["annotations"].is_object()) {
    for (auto it = j["annotations"].begin(); it != j["annotations"].end(); ++it) {
      if (it->is_string()) {
        l.annotations[it.key()] = *it;
      }
    }
  }
  return l;
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

} // namespace

std::mt19937_64& rng() {
  static std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

std::string random_mac_address() {
  std::uniform_int_distribution<int> byte(0, 255);
  char buffer[18];
  std::snprintf(buffer,
                sizeof buffer,
                "%02x:%02x:%02x:%02x:%02x:%02x",
                (byte(rng()) & 0xfc) | 0x02,
                byte(rng()),
                byte(rng()),
                byte(rng()),
                byte(rng()),
                byte(rng()));
  return buffer;
}

std::optional<RegistryEndpoint>
registry_endpoint(const ConfiguredRegistry& configured,
                  const std::optional<std::string>& body_registry,
                  const std::optional<std::string>& body_organization,
                  const std::string& ca_file) {
  const ConfiguredRegistry defaults;
  const bool request_overrides = (body_registry && *body_registry != defaults.registry) ||
                                 (body_organization && *body_organization != defaults.organization);
  RegistryEndpoint endpoint;
  endpoint.host =
      request_overrides ? body_registry.value_or(defaults.registry) : configured.registry;
  endpoint.organization = request_overrides ? body_organization.value_or(defaults.organization)
                                            : configured.organization;
  endpoint.base_url = "https://" + endpoint.host;
  endpoint.ca_file = ca_file;
  if (!is_loopback_host(endpoint.host)) {
    return std::nullopt;
  }
  return endpoint;
}

std::optional<std::pair<std::string, std::string>> push_credentials_from_environment() {
  const auto first_set = [](const char* a, const char* b) -> std::optional<std::string> {
    for (const char* name : {a, b}) {
      const char* value = std::getenv(name);
      if (value != nullptr && *value != '\0') {
        return std::string(value);
      }
    }
    return std::nullopt;
  };
  auto user = first_set("GITHUB_USERNAME", "GHCR_USERNAME");
  auto token = first_set("GITHUB_TOKEN", "GHCR_TOKEN");
  if (!user || !token) {
    return std::nullopt;
  }
  return std::make_pair(*user, *token);
}

std::string pull_oci_image(const RegistryEndpoint& registry,
                           const std::string& repository,
                           const std::string& tag,
                           const fs::path& staging,
                           const std::function<void(double)>& progress,
                           std::chrono::milliseconds pace) {
  auto c = client_for(registry);
  const std::string token =
      token_for(*c, registry, repository, "pull", push_credentials_from_environment());
  // fetchManifest (§2.2): only the OCI manifest type is accepted; the digest comes only from
  // Docker-Content-Digest and is never recomputed.
  auto r = c->Get("/v2/" + repository + "/manifests/" + tag,
                  with_auth({{"Accept", k_manifest_type}}, token, false));
  if (!r || r->status != 200 || !r->has_header("Docker-Content-Digest")) {
    throw RegistryFailure(k_manifest_failure);
  }
  const std::string manifest_digest = r->get_header_value("Docker-Content-Digest");
  json m = json::parse(r->body, nullptr, false);
  if (!m.is_object() || !m.contains("mediaType") || !m["mediaType"].is_string() ||
      !m.contains("layers") || !m["layers"].is_array()) {
    throw RegistryFailure(k_manifest_failure);
  }
  std::optional<Layer> config;
  if (m.contains("config") && !m["config"].is_null()) {
    config = layer_from(m["config"]);
  }
  std::vector<Layer> layers;
  for (const json& l : m["layers"]) {
    layers.push_back(layer_from(l));
  }
  std::map<std::string, std::string> annotations;
  if (m.contains("annotations") && m["annotations"].is_object()) {
    for (auto it = m["annotations"].begin(); it != m["annotations"].end(); ++it) {
      if (it->is_string()) {
        annotations[it.key()] = *it;
      }
    }
  }
  auto annotation = [&](const char* key) {
    auto it = annotations.find(key);
    return it == annotations.end() ? std::string() : it->second;
  };
  const bool oci_format = (config && config->media_type == k_config_type) ||
                          std::any_of(layers.begin(), layers.end(), [](const Layer& l) {
                            return l.media_type == k_disk_type;
                          });
  if (!oci_format) {
    throw RegistryFailure("lume-sim: legacy-format images (LZ4 chunks) are not simulated");
  }

  std::vector<Layer> disk;
  std::optional<Layer> nvram;
  for (const Layer& l : layers) {
    if (l.media_type == k_disk_type) {
      disk.push_back(l);
    } else if (l.media_type == k_nvram_type) {
      nvram = l;
    }
  }
  std::stable_sort(disk.begin(), disk.end(), [](const Layer& a, const Layer& b) {
    return number_or(a.annotation("org.trycua.lume.part.number"), 0) <
           number_or(b.annotation("org.trycua.lume.part.number"), 0);
  });
  // Unique blobs, each downloaded once (#3066: a digest may appear at several offsets).
  std::uint64_t total_bytes = (config ? config->size : 0) + (nvram ? nvram->size : 0);
  std::set<std::string> unique;
  for (const Layer& l : disk) {
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

  json vm_config = json::object();
  if (config) {
    json c_json = json::parse(download_blob(*c, repository, token, *config), nullptr, false);
    if (c_json.is_object()) {
      for (const char* key : {"os", "hardwareModel", "machineIdentifier"}) {
        if (c_json.contains(key) && c_json[key].is_string()) {
          vm_config[key] = c_json[key];
        }
      }
    }
    advance(config->size);
  }
  fs::create_directories(staging);
  if (nvram) {
    write_file(staging / "nvram.bin", download_blob(*c, repository, token, *nvram));
    advance(nvram->size);
  }
  std::uint64_t disk_size = number_or(annotation("org.trycua.lume.total-uncompressed-size"), 0);
  if (disk_size == 0) {
    for (const Layer& l : disk) {
      disk_size += number_or(l.annotation("org.trycua.lume.content.uncompressed-size"), 0);
    }
  }
  const fs::path disk_path = staging / "disk.img";
  int fd = open(disk_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(disk_size)) != 0) {
    if (fd >= 0)
      close(fd);
    throw RegistryFailure("cannot create disk.img");
  }
  try {
    for (const std::string& digest : unique) {
      const auto first = std::find_if(
          disk.begin(), disk.end(), [&](const Layer& l) { return l.digest == digest; });
      const std::string gz = download_blob(*c, repository, token, *first);
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
      advance(first->size);
    }
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);

  // config.json synthesized from the config blob and the annotations; then a random MAC.
  if (!vm_config.contains("os")) {
    vm_config["os"] =
        annotation("org.trycua.lume.os").empty() ? "macOS" : annotation("org.trycua.lume.os");
  }
  if (!annotation("org.trycua.lume.cpu-count").empty()) {
    vm_config["cpuCount"] = number_or(annotation("org.trycua.lume.cpu-count"), 0);
  }
  if (!annotation("org.trycua.lume.memory-size").empty()) {
    vm_config["memorySize"] = number_or(annotation("org.trycua.lume.memory-size"), 0);
  }
  vm_config["diskSize"] = number_or(annotation("org.trycua.lume.disk-size"), disk_size);
  const std::string display = annotation("org.trycua.lume.display");
  vm_config["display"] = display.empty() ? "1920x1080" : display;
  const std::string network = annotation("org.trycua.lume.network-mode");
  vm_config["networkMode"] = network.empty() ? "nat" : network;
  vm_config["macAddress"] = random_mac_address();
  write_file(staging / "config.json", vm_config.dump(2));
  return manifest_digest;
}

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

  std::ifstream config_in(vm_dir / "config.json");
  std::stringstream config_text;
  config_text << config_in.rdbuf();
  json vm_config = json::parse(config_text.str(), nullptr, false);
  if (!vm_config.is_object()) {
    vm_config = json::object();
  }
  std::ifstream nvram_in(vm_dir / "nvram.bin", std::ios::binary);
  std::stringstream nvram;
  nvram << nvram_in.rdbuf();

  auto upload = [&](const std::string& bytes, const std::string& digest) {
    auto head = c->Head("/v2/" + repository + "/blobs/" + digest, with_auth({}, token, true));
    if (head && head->status == 200) {
      return;
    }
    auto start = c->Post("/v2/" + repository + "/blobs/uploads/",
                         with_auth({}, token, true),
                         "",
                         "application/octet-stream");
    if (!start || start->status != 202 || !start->has_header("Location")) {
      throw RegistryFailure("Failed to start blob upload for " + digest);
    }
    auto put = c->Put(resolve_location(start->get_header_value("Location"), digest),
                      with_auth({}, token, true),
                      bytes,
                      "application/octet-stream");
    if (!put || put->status != 201) {
      throw RegistryFailure("Failed to upload blob " + digest);
    }
  };

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
  upload(config_bytes, config_digest);
  const std::string nvram_bytes = nvram.str();
  const std::string nvram_digest = digest_of(nvram_bytes);
  upload(nvram_bytes, nvram_digest);

  json layers = json::array();
  layers.push_back({{"mediaType", k_nvram_type},
                    {"digest", nvram_digest},
                    {"size", nvram_bytes.size()},
                    {"annotations", {{"org.opencontainers.image.title", "nvram.bin"}}}});
  const fs::path disk_path = vm_dir / "disk.img";
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
        upload(chunk.gz, chunk.gz_digest);
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
  json manifest = {{"schemaVersion", 2},
                   {"mediaType", k_manifest_type},
                   {"config",
                    {{"mediaType", k_config_type},
                     {"digest", config_digest},
                     {"size", config_bytes.size()},
                     {"annotations", {{"org.opencontainers.image.title", "config.json"}}}}},
                   {"layers", layers},
                   {"annotations", annotations}};
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

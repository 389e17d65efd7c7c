#include "lume/registry_image.hpp"

#include "oci/manifest.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

namespace lume_unlock::lume {

std::string digest_tag(const oci::Digest& digest) {
  return "sha256-" + digest.hex();
}

Result<LumeImage>
lume_image_for(const oci::Reference& ref, const std::string& tag, const std::string& what) {
  const auto slash = ref.repository.find('/');
  if (slash == std::string::npos) {
    return Error(ErrorCategory::usage,
                 what,
                 "Lume uses only <organization>/<name> repositories, and '" + ref.repository +
                     "' has no organization",
                 "use a repository with two components, e.g. " + ref.registry + "/myorg/" +
                     ref.repository);
  }
  return LumeImage{
      ref.registry, ref.repository.substr(0, slash), ref.repository.substr(slash + 1), tag};
}

Status require_https_registry(const std::string& registry_url, const std::string& what) {
  if (util::starts_with(registry_url, "https://")) {
    return ok_status();
  }
  return Error(ErrorCategory::usage,
               what,
               "Lume pulls and pushes only over https, and " + registry_url +
                   " is a plain-HTTP (--insecure-registry) registry",
               "serve the registry with TLS on a certificate the Mac trusts (its keychain), and "
               "drop --insecure-registry for it");
}

Status require_no_registry_override(const LumeImage& image,
                                    const RegistrySetting& setting,
                                    const std::string& what) {
  const RegistrySetting defaults;
  const bool names_defaults =
      image.registry == defaults.registry && image.organization == defaults.organization;
  const bool overridden = setting.type != defaults.type || setting.registry != defaults.registry ||
                          setting.organization != defaults.organization;
  if (!names_defaults || !overridden) {
    return ok_status();
  }
  const std::string configured = setting.type == defaults.type
                                     ? "registry.ghcr.registry: " + setting.registry +
                                           ", registry.ghcr.organization: " + setting.organization
                                     : "registry.type: " + setting.type;
  return Error(ErrorCategory::usage,
               what,
               "Lume replaces " + defaults.registry + "/" + defaults.organization +
                   " with the registry in its config.yaml (" + configured +
                   "), so it would not fetch the image checked here",
               "remove the registry block from Lume's ~/.config/lume/config.yaml (then restart "
               "`lume serve`), or publish the image under another organization");
}

std::optional<PushFailure> find_push_failure(std::string_view log_since_push,
                                             const std::string& image_name,
                                             const std::vector<std::string>& tags) {
  const std::string prefix = "Background push failed for image: " + image_name + ":" +
                             util::join(tags, ",") + " - Error: ";
  std::vector<std::string> errors;
  std::size_t start = 0;
  while (start < log_since_push.size()) {
    std::size_t end = log_since_push.find('\n', start);
    if (end == std::string_view::npos) {
      end = log_since_push.size();
    }
    const std::string_view line = log_since_push.substr(start, end - start);
    start = end + 1;
    if (util::starts_with(line, prefix)) {
      if (errors.size() > 3) {
        errors.erase(errors.begin(), errors.end() - 3);
      }
      return PushFailure{std::string(line.substr(prefix.size())), errors};
    }
    // Logger.swift: "[<ISO8601 timestamp>] ERROR: <message>".
    if (!line.empty() && line.front() == '[' && line.find("] ERROR: ") != std::string_view::npos) {
      errors.emplace_back(line);
    }
  }
  return std::nullopt;
}

namespace {

Error unverifiable(const std::string& what, const std::string& why) {
  return Error(ErrorCategory::registry,
               what,
               "the pushed image cannot be verified: " + why,
               "nothing was recorded; check the image with `skopeo inspect --raw` and run the "
               "command again");
}

std::optional<std::uint64_t> number(const oci::Annotations& annotations, const char* key) {
  auto it = annotations.find(key);
  if (it == annotations.end() || it->second.empty() ||
      it->second.find_first_not_of("0123456789") != std::string::npos || it->second.size() > 19) {
    return std::nullopt;
  }
  return std::stoull(it->second);
}

/// An open file, closed on scope exit.
class ReadOnlyFile {
public:
  explicit ReadOnlyFile(const std::string& path)
      : m_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~ReadOnlyFile() {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
  }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
  int fd() const { return m_fd; }

private:
  int m_fd;
};

Error unreadable(const std::string& path, int error) {
  return Error(ErrorCategory::failure,
               "reading '" + path + "'",
               std::strerror(error),
               "the VM directory must stay in place until the push is verified");
}

/// SHA-256 of `size` bytes of `fd` at `offset` (short files hash what is there: the caller
/// compares sizes separately).
Result<std::string>
hash_slice(int fd, std::uint64_t offset, std::uint64_t size, const std::string& path) {
  util::Sha256 hash;
  std::vector<char> buffer(1 << 20);
  while (size > 0) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(size, buffer.size()));
    const ssize_t got = ::pread(fd, buffer.data(), want, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) {
        continue;
      }
      return unreadable(path, errno);
    }
    if (got == 0) {
      break;
    }
    hash.update(buffer.data(), static_cast<std::size_t>(got));
    offset += static_cast<std::uint64_t>(got);
    size -= static_cast<std::uint64_t>(got);
  }
  return hash.finish_hex();
}

} // namespace

Result<PushedImageCheck> check_pushed_image(const oci::Manifest& manifest,
                                            const std::string& vm_dir,
                                            const std::string& what) {
  namespace mt = oci::media_type;
  namespace an = oci::annotation;
  if (!manifest.config || manifest.config->media_type != mt::lume_config) {
    return unverifiable(what,
                        "it is not a Lume OCI image (config media type '" +
                            (manifest.config ? manifest.config->media_type : "none") + "')");
  }
  PushedImageCheck check;

  const std::string nvram_path = vm_dir + "/nvram.bin";
  LUME_UNLOCK_TRY_ASSIGN(auto nvram, util::sha256_file_hex(nvram_path));
  const std::string disk_path = vm_dir + "/disk.img";
  ReadOnlyFile disk(disk_path);
  struct stat info {};
  if (disk.fd() < 0 || ::fstat(disk.fd(), &info) != 0) {
    return unreadable(disk_path, errno);
  }
  const auto disk_size = static_cast<std::uint64_t>(info.st_size);

  int nvram_layers = 0;
  std::uint64_t covered = 0;
  for (const oci::Descriptor& layer : manifest.layers) {
    const std::string title = layer.annotations.count(an::title) != 0
                                  ? layer.annotations.at(an::title)
                                  : layer.digest.str();
    if (layer.media_type == mt::lume_nvram) {
      ++nvram_layers;
      if (layer.digest.hex() != nvram) {
        check.differences.push_back("nvram.bin: sha256:" + nvram + " here, " + layer.digest.str() +
                                    " in the registry");
      }
      continue;
    }
    if (layer.media_type != mt::lume_disk) {
      continue;
    }
    const auto size = number(layer.annotations, an::lume_uncompressed_size);
    const auto offset = number(layer.annotations, an::lume_part_offset).value_or(0);
    auto digest = layer.annotations.find(an::lume_uncompressed_digest);
    if (!size || digest == layer.annotations.end()) {
      return unverifiable(what, "layer '" + title + "' has no uncompressed size and digest");
    }
    LUME_UNLOCK_TRY_ASSIGN(auto local, hash_slice(disk.fd(), offset, *size, disk_path));
    check.disk_bytes_hashed += *size;
    covered += *size;
    if (offset + *size > disk_size || "sha256:" + local != digest->second) {
      check.differences.push_back(title + " (offset " + std::to_string(offset) + ", " +
                                  std::to_string(*size) + " bytes): sha256:" + local + " here, " +
                                  digest->second + " in the registry");
    }
  }
  if (nvram_layers != 1) {
    return unverifiable(what, "it has " + std::to_string(nvram_layers) + " NVRAM layers, not 1");
  }
  if (covered != disk_size) {
    check.differences.push_back("disk.img: " + std::to_string(disk_size) + " bytes here, " +
                                std::to_string(covered) + " in the registry's layers");
  }
  return check;
}

} // namespace lume_unlock::lume

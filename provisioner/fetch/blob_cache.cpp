#include "fetch/fetch.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace lume_unlock::fetch {

namespace {

constexpr const char* k_app = "lume-unlock";

std::optional<std::string> non_empty(const char* value) {
  if (value == nullptr || *value == '\0') {
    return std::nullopt;
  }
  return std::string(value);
}

Error io_error(const std::string& what, const std::string& path, int err) {
  return Error(ErrorCategory::failure, what, "'" + path + "': " + std::strerror(err));
}

} // namespace

BlobCache::BlobCache(std::string root) : m_root(std::move(root)) {
  while (m_root.size() > 1 && m_root.back() == '/') {
    m_root.pop_back();
  }
}

Result<std::string> BlobCache::root_for(const CacheEnvironment& environment) {
  if (environment.lume_unlock_cache_dir && !environment.lume_unlock_cache_dir->empty()) {
    return *environment.lume_unlock_cache_dir;
  }
  const bool has_home = environment.home && !environment.home->empty();
  if (environment.macos && has_home) {
    return *environment.home + "/Library/Caches/" + k_app;
  }
  // The XDG base directory spec ignores relative values.
  if (!environment.macos && environment.xdg_cache_home && !environment.xdg_cache_home->empty() &&
      environment.xdg_cache_home->front() == '/') {
    return *environment.xdg_cache_home + "/" + k_app;
  }
  if (has_home) {
    return *environment.home + "/.cache/" + k_app;
  }
  return Error(ErrorCategory::usage,
               "cannot place the artifact cache",
               "HOME is not set",
               "set LUME_UNLOCK_CACHE_DIR to a directory for downloaded artifacts");
}

Result<std::string> BlobCache::default_root() {
  CacheEnvironment environment;
  environment.lume_unlock_cache_dir = non_empty(std::getenv("LUME_UNLOCK_CACHE_DIR"));
  environment.xdg_cache_home = non_empty(std::getenv("XDG_CACHE_HOME"));
  environment.home = non_empty(std::getenv("HOME"));
#ifdef __APPLE__
  environment.macos = true;
#endif
  return root_for(environment);
}

std::string BlobCache::blob_path(std::string_view sha256_hex) const {
  return m_root + "/blobs/sha256/" + std::string(sha256_hex);
}

std::string BlobCache::partial_path(std::string_view source_key) const {
  // Hashed: a URL is no file name (slashes, length), and the same source finds the same file.
  return m_root + "/partial/" + util::sha256_hex(source_key);
}

std::optional<std::string> BlobCache::find(std::string_view sha256_hex) const {
  if (!util::is_sha256_hex(sha256_hex)) {
    return std::nullopt;
  }
  auto path = blob_path(sha256_hex);
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return std::nullopt;
  }
  return path;
}

Status BlobCache::prepare() const {
  LUME_UNLOCK_TRY(util::make_directories(m_root + "/blobs/sha256"));
  LUME_UNLOCK_TRY(util::make_directories(m_root + "/partial"));
  return ok_status();
}

Result<std::string> BlobCache::commit(const std::string& file, std::string_view sha256_hex) const {
  if (!util::is_sha256_hex(sha256_hex)) {
    return Error(ErrorCategory::failure,
                 "cannot add '" + file + "' to the artifact cache",
                 "'" + std::string(sha256_hex) + "' is not a sha256 digest");
  }
  const auto target = blob_path(sha256_hex);
  const std::string what = "cannot add '" + file + "' to the artifact cache as '" + target + "'";
  // No fsync: it cost a third of a 256 MiB fetch (tests/bench/artifact_transfer_bench), and a
  // blob is hashed again whenever it is used (fetch_artifact), so one that a crash left short
  // or zeroed under its name is evicted and fetched again, never installed.
  if (chmod(file.c_str(), 0644) != 0) {
    return io_error(what, file, errno);
  }
  // A concurrent commit of the same digest renames identical bytes over ours: harmless.
  if (rename(file.c_str(), target.c_str()) != 0) {
    return io_error(what, target, errno);
  }
  return target;
}

void BlobCache::evict(std::string_view sha256_hex) const {
  if (util::is_sha256_hex(sha256_hex)) {
    unlink(blob_path(sha256_hex).c_str());
  }
}

} // namespace lume_unlock::fetch

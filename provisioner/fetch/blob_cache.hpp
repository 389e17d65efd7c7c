#pragma once

#include "util/result.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::fetch {

/// What default_root() reads, passed in so the choice can be tested on any platform.
struct CacheEnvironment {
  std::optional<std::string> lume_unlock_cache_dir; ///< $LUME_UNLOCK_CACHE_DIR
  std::optional<std::string> xdg_cache_home;        ///< $XDG_CACHE_HOME
  std::optional<std::string> home;                  ///< $HOME
  bool macos = false;
};

/// The content-addressed cache of fetched artifacts:
///   <root>/blobs/sha256/<hex>    verified bytes, named by their SHA-256, never written in place
///   <root>/partial/<key>         a download in progress (key = SHA-256 of the source), kept
///                                across runs so an interrupted one resumes
///   <root>/partial/<key>.lock    held (util::FileLock) by the process writing that partial
/// A blob appears only by rename after its digest matched, so a reader never sees half a file;
/// two processes committing the same blob rename identical bytes, which is harmless.
class BlobCache {
public:
  explicit BlobCache(std::string root);

  /// $LUME_UNLOCK_CACHE_DIR when set and not empty; else on macOS ~/Library/Caches/lume-unlock;
  /// elsewhere $XDG_CACHE_HOME/lume-unlock (when absolute) or ~/.cache/lume-unlock. Fails
  /// (category usage) when none can be formed (no HOME), with a hint naming
  /// LUME_UNLOCK_CACHE_DIR.
  static Result<std::string> root_for(const CacheEnvironment& environment);
  /// root_for() of this process's environment and platform.
  static Result<std::string> default_root();

  const std::string& root() const { return m_root; }
  /// <root>/blobs/sha256/<hex> (whether or not it exists).
  std::string blob_path(std::string_view sha256_hex) const;
  /// <root>/partial/<key> for a source key (fetch uses describe() of the source): the same
  /// source always maps to the same partial file.
  std::string partial_path(std::string_view source_key) const;

  /// The path of the blob with this digest when the cache has it as a regular file. Does not
  /// re-hash it (fetch_artifact does).
  std::optional<std::string> find(std::string_view sha256_hex) const;

  /// Creates <root>/blobs/sha256 and <root>/partial. Fails with the path and errno text.
  Status prepare() const;

  /// Moves `file` (on the cache's file system, normally a partial) to blob_path(sha256_hex) by
  /// rename (not fsynced: every use re-hashes a blob); mode 0644. The caller has checked the
  /// digest. Returns the blob path. Fails (category failure) with both paths and errno text.
  Result<std::string> commit(const std::string& file, std::string_view sha256_hex) const;

  /// Removes the blob with this digest (a cached file that no longer hashes to its name).
  void evict(std::string_view sha256_hex) const;

private:
  std::string m_root;
};

} // namespace lume_unlock::fetch

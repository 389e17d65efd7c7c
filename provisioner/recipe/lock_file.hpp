#pragma once

#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::recipe {

inline constexpr const char* k_lock_schema = "lume-unlock/recipe-lock/v1";

/// One reference of a recipe, pinned: the field it came from, the reference as written, and the
/// manifest digest it resolved to when the lock was made.
struct LockedReference {
  std::string field;     ///< "source.image"
  std::string reference; ///< as written in the recipe: "ghcr.io/trycua/macos-tahoe-cua:latest"
  std::string digest;    ///< "sha256:..."
  std::string pinned;    ///< canonical "registry/repository@sha256:..."
  std::optional<std::string> media_type;
  /// "sha256:<hex>" of the public key (DER) whose cosign signature vouched for `digest` (the
  /// recipe's trust: block); absent when none was checked, and in locks made before.
  std::optional<std::string> signed_by;

  friend bool operator==(const LockedReference& a, const LockedReference& b) {
    return a.field == b.field && a.reference == b.reference && a.digest == b.digest &&
           a.pinned == b.pinned && a.media_type == b.media_type && a.signed_by == b.signed_by;
  }
};

/// One item of a recipe's install: block, pinned: the SHA-256 and size of the bytes its source
/// served when the lock was made. A locked create refuses any other bytes.
struct LockedArtifact {
  std::string field;  ///< "install[0]"
  std::string source; ///< fetch::describe() of the source (URLs redacted)
  std::string sha256; ///< 64 lower-case hex
  std::uint64_t size = 0;

  friend bool operator==(const LockedArtifact& a, const LockedArtifact& b) {
    return a.field == b.field && a.source == b.source && a.sha256 == b.sha256 && a.size == b.size;
  }
};

/// One file of a baked image's shim, as recorded when it was baked.
struct BakedFile {
  std::string path;   ///< absolute path in the guest
  std::string sha256; ///< 64 hex

  friend bool operator==(const BakedFile& a, const BakedFile& b) {
    return a.path == b.path && a.sha256 == b.sha256;
  }
};

/// An image `lume-unlock bake` pushed from this recipe: where it went, the manifest digest the
/// registry holds for it (resolved after the push, since Lume never reports one), when, from
/// which recipe bytes, and the shim files inside it.
struct BakedImage {
  std::string reference;     ///< as pushed: "registry/org/name:tag"
  std::string digest;        ///< "sha256:..."
  std::string pinned;        ///< "registry/org/name@sha256:..."
  std::string pushed_at;     ///< RFC 3339
  std::string recipe_sha256; ///< the recipe bytes it was baked from
  std::vector<BakedFile> shim_files;
  /// The public key (as LockedReference::signed_by) that signed the pushed digest with
  /// `bake --sign-key`; absent for unsigned bakes and in locks made before.
  std::optional<std::string> signed_by;

  friend bool operator==(const BakedImage& a, const BakedImage& b) {
    return a.reference == b.reference && a.digest == b.digest && a.pinned == b.pinned &&
           a.pushed_at == b.pushed_at && a.recipe_sha256 == b.recipe_sha256 &&
           a.shim_files == b.shim_files && a.signed_by == b.signed_by;
  }
};

nlohmann::json to_json(const BakedImage& baked);

/// The lock file of DESIGN §7: the recipe's SHA-256 and every reference resolved to a digest, so
/// that a create from a locked recipe is reproducible.
struct LockFile {
  std::string recipe_path;   ///< as given to `lume-unlock lock`
  std::string recipe_sha256; ///< 64 hex of the recipe's bytes
  std::vector<LockedReference> references;
  /// The install: items, in recipe order; absent from the file when the recipe has none.
  std::vector<LockedArtifact> artifacts;
  std::vector<BakedImage> baked; ///< newest last; absent from the file when empty
  std::optional<std::string> created_at;

  /// The entry for a field, or nullptr.
  const LockedReference* find(const std::string& field) const;
  /// The pinned artifact of an install: field ("install[0]"), or nullptr.
  const LockedArtifact* find_artifact(const std::string& field) const;
  /// True when the lock was made from exactly these recipe bytes.
  bool matches_recipe(std::string_view recipe_bytes) const;

  friend bool operator==(const LockFile& a, const LockFile& b) {
    return a.recipe_path == b.recipe_path && a.recipe_sha256 == b.recipe_sha256 &&
           a.references == b.references && a.artifacts == b.artifacts && a.baked == b.baked &&
           a.created_at == b.created_at;
  }
};

nlohmann::json to_json(const LockFile& lock);
/// Parses lock file text; fails (category usage) as "<path>: <what is wrong>".
Result<LockFile> parse_lock_file(std::string_view text, const std::string& path);

/// The largest lock file read: a lock holds one line per reference and baked image.
inline constexpr std::size_t k_max_lock_file_bytes = 16u << 20;

/// Reads (regular files of at most k_max_lock_file_bytes only) and parses a lock file.
Result<LockFile> load_lock_file(const std::string& path);

/// Where the lock of a recipe lives: "dir/name.yaml" -> "dir/name.lock.json".
std::string lock_path_for(const std::string& recipe_path);

/// Writes the lock atomically.
Status write_lock_file(const std::string& path, const LockFile& lock);

} // namespace lume_unlock::recipe

#pragma once

#include "util/archive.hpp"
#include "util/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::fetch {

/// How an artifact becomes files (a recipe's `unpack:`).
enum class UnpackFormat { none, zip, tar_gz };

/// "zip" | "tar.gz" | "none". Fails (category usage) naming the value, the accepted ones and a
/// did-you-mean when one is close.
Result<UnpackFormat> parse_unpack_format(std::string_view text);
/// The recipe spelling of a format.
const char* format_name(UnpackFormat format);

/// One file of an unpacked artifact.
struct UnpackedFile {
  /// Path below the install destination ("bin/llama-server"); empty for UnpackFormat::none,
  /// where the one file is the destination itself.
  std::string relative_path;
  /// Where it is on the host, inside the staging directory.
  std::string host_path;
  std::string sha256; ///< empty for a symbolic link
  std::uint64_t size = 0;
  bool executable = false;
  /// The link's target (relative, inside the tree) when this entry is a symbolic link; empty
  /// for a regular file.
  std::string symlink_target;
};

/// Unpacks the artifact at `blob_path` into `staging_dir`, which must not exist yet (it appears
/// whole, or not at all), and lists every regular file and symbolic link in it, sorted by
/// relative path. zip and tar.gz go through util::safe_extract (its rules and `limits` apply;
/// refusals are category verification), dropping `strip_components` leading path components
/// (a directory with no more components is skipped; a file or link with no more is refused,
/// so nothing is lost silently). none hard-links the blob (or copies it across file systems)
/// to `<staging_dir>/<file name of blob_path>`; strip_components must then be 0 (usage).
/// Staging files may be hard links to cache blobs: read them, never write them.
/// `known_sha256` (unpack none only): the blob's digest as fetch_artifact verified it, so a
/// multi-gigabyte model is not read once more to list it; empty: it is hashed.
Result<std::vector<UnpackedFile>> unpack_artifact(const std::string& blob_path,
                                                  UnpackFormat format,
                                                  unsigned strip_components,
                                                  const std::string& staging_dir,
                                                  const util::ExtractLimits& limits = {},
                                                  const std::string& known_sha256 = {});

} // namespace lume_unlock::fetch

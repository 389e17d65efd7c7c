#pragma once

#include "fetch/archive_unpack.hpp"
#include "fetch/artifact_source.hpp"

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>

namespace lume_unlock::recipe {

struct Recipe;

/// One item of a recipe's `install:` block: an artifact put into the guest (issue 24;
/// image-recipes/README.md documents the fields).
struct InstallItem {
  std::string field; ///< "install[0]", for messages and the lock
  /// Where the bytes come from. A `file:` source holds the path as written; install_source()
  /// resolves it against the recipe's directory.
  fetch::ArtifactSource source;
  std::optional<std::string> sha256; ///< 64 lower-case hex; absent: the lock (or the fetch) says
  std::string dest;                  ///< absolute guest path: the tree's root, or the file
  fetch::UnpackFormat unpack = fetch::UnpackFormat::none;
  unsigned strip_components = 0;
  mode_t mode = 0644; ///< of the file, for unpack none; archives keep their own (0755 or 0644)
  /// Archives only (`files:`): SHA-256 (64 lower-case hex) of files inside the unpacked tree,
  /// by their path below `dest` ("llama-bench"), so a publisher's digest of one program is
  /// checked, not assumed. Checked on the host before any byte reaches the guest.
  std::map<std::string, std::string> file_sha256;
  /// `share: true` (issue 32): the verified blob stays in the host's cache, which the VM gets
  /// as a read-only shared directory, and `dest` becomes a link to the blob inside the share,
  /// so no byte crosses SSH. A single file from a url only (apply/artifact_installer.hpp).
  bool share = false;

  /// The file name of `dest` ("llama.cpp", "model.gguf"): the progress label.
  std::string label() const;
};

/// The item's source, with a `file:` path resolved against the recipe's directory.
fetch::ArtifactSource install_source(const Recipe& recipe, const InstallItem& item);

/// The guest path of one file of an unpacked item (`relative` empty: the dest itself).
std::string guest_path_of(const InstallItem& item, const std::string& relative);

/// Checks a guest path a recipe names as an install destination: absolute, normal (no "//",
/// ".", ".." or trailing "/"), printable without '\', not "/". Returns why it is not, or nothing.
std::optional<std::string> dest_problem(const std::string& path);

} // namespace lume_unlock::recipe

#pragma once

#include "enablement/enablement_list.hpp"
#include "util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::recipe {

/// Where the VM comes from: a registry image, or an IPSW installed unattended.
struct SourceSpec {
  std::optional<std::string> image; ///< OCI reference, e.g. ghcr.io/trycua/macos-tahoe-cua:latest
  std::optional<std::string> ipsw;  ///< "latest" or a host path to an .ipsw
  std::optional<std::string> unattended; ///< preset ("tahoe") or host path, with ipsw only
};

struct VmSpec {
  int cpu = 8;
  std::uint64_t memory_bytes = 16ULL << 30;
  std::optional<std::uint64_t> disk_bytes; ///< absent: keep the image's disk
  std::optional<std::string> display;      ///< "WIDTHxHEIGHT"
};

struct GuestSpec {
  std::string user = "lume";
};

struct ShimSpec {
  /// The capability profile the shim is configured with (DESIGN §4.1); entries may override it.
  enablement::Profile profile;
  /// A bundle directory or archive on the host, or an OCI reference pinned by digest.
  std::optional<std::string> bundle;
};

/// An image recipe (image-recipes/README.md documents every field).
struct Recipe {
  std::string path;   ///< as given by the user
  std::string sha256; ///< of the recipe file's bytes
  SourceSpec source;
  VmSpec vm;
  GuestSpec guest;
  ShimSpec shim;
  enablement::EnablementList enablement;
};

/// Parses recipe text. `source_name` prefixes every error as "source_name:line:col: field: ...".
/// Unknown keys, wrong types and out-of-range values are usage errors (exit 2).
Result<Recipe> parse_recipe(std::string_view text, const std::string& source_name);

/// Reads and parses a recipe file.
Result<Recipe> load_recipe(const std::string& path);

} // namespace lume_unlock::recipe

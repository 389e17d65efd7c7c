#pragma once

#include "bundle/loader.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "signing/signing.hpp"

#include <optional>
#include <string>

namespace lume_unlock::transfer {

/// Which shim bundle a command uses, and why that one.
struct BundleLocation {
  std::string path;   ///< a bundle directory, a lume-unlock-shim-bundle-*.tar.gz, or REF@sha256:…
  std::string source; ///< "--bundle", "recipe shim.bundle", "$LUME_UNLOCK_BUNDLE", "installed",
                      ///< "build tree"
};

/// The first of: the command's --bundle flag, the recipe's shim.bundle, $LUME_UNLOCK_BUNDLE, the
/// bundle installed beside this executable (installed_bundle_beside), the shim-bundle directory
/// of the build tree this binary came from.
BundleLocation locate_bundle(const std::optional<std::string>& flag,
                             const std::optional<std::string>& recipe_bundle);

/// `<dir of executable>/../share/lume-unlock/shim-bundle` when it holds a bundle.json: where
/// `cmake --install` puts the bundle, found relative to the binary so that a moved install prefix
/// still works. Nothing otherwise (a binary run from the build tree).
std::optional<std::string> installed_bundle_beside(const std::string& executable);

/// How a location is read. A path that exists is a path. Otherwise it is a registry reference
/// when it has a digest ("…@sha256:…"), or when it does not start like a path ('/', '.', '~'),
/// does not end like an archive (.tar.gz, .tgz) and either tags its last component
/// ("repo:1.0") or starts with a registry host ("ghcr.io/…", "localhost/…", "host:5000/…").
/// Everything else is a path (that does not exist).
enum class LocationKind { path, reference };
LocationKind location_kind(const std::string& location);

/// A bundle ready to install, and the registry artifact it came from when it did.
struct LocatedBundle {
  bundle::LoadedBundle bundle;
  std::optional<oci::Reference> artifact; ///< pinned by digest; absent for local bundles
  /// The signature that vouched for `artifact`, when trusted keys were given.
  std::optional<signing::VerifiedSignature> signature;
};

/// Loads and verifies the bundle at `location`: a directory; an archive extracted safely into a
/// temporary directory that lives as long as the returned bundle; or a registry reference,
/// fetched by digest through `registry` (transfer::fetch_bundle). A reference without a digest
/// is a usage error whose hint says how to pin it. Errors name the location's source. With
/// `trusted_keys` (a recipe's trust: block), a registry bundle must carry a cosign signature by
/// one of them, checked before a byte of it is fetched (exit 6 otherwise); local bundles are the
/// user's own files and are not checked.
Result<LocatedBundle>
load_located_bundle(const BundleLocation& location,
                    oci::RegistryClient& registry,
                    const std::vector<signing::TrustedKey>& trusted_keys = {});

} // namespace lume_unlock::transfer

#pragma once

// The shim bundle on the host: which one a command uses and loading it, and the bundle as an OCI
// artifact (DESIGN §4.4), published under a tag and fetched back by digest.

#include "bundle/bundle.hpp"
#include "oci/manifest.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "signing/signing.hpp"
#include "util/archive.hpp"
#include "util/result.hpp"

#include <optional>
#include <string>
#include <vector>

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
/// fetched by digest (fetch_bundle). A reference without a digest is a usage error whose hint
/// says how to pin it. Errors name the location's source. With `trusted_keys` (a recipe's trust:
/// block), a registry bundle must carry a cosign signature by one of them, checked before a byte
/// of it is fetched (exit 6 otherwise); local bundles are the user's own files and are not
/// checked.
Result<LocatedBundle>
load_located_bundle(const BundleLocation& location,
                    oci::RegistryClient& registry,
                    const std::vector<signing::TrustedKey>& trusted_keys = {});

/// A shim bundle published as an OCI artifact.
struct PublishedBundle {
  oci::Reference reference; ///< as tagged
  oci::Digest digest;       ///< the manifest digest (checked against the registry's answer)
  std::string version;      ///< bundle.json's version
  oci::Manifest manifest;
};

/// Verifies the archive (the bundle loader checks every file against bundle.json), then pushes
/// an artifact manifest under ref's tag: artifactType application/vnd.lume-unlock.shim-bundle.v1,
/// config = bundle.json's bytes (application/vnd.lume-unlock.shim-bundle.config.v1+json), one
/// layer = the archive itself (application/vnd.lume-unlock.shim-bundle.layer.v1.tar+gzip, titled
/// with its file name). No timestamps: the same archive under the same name gives the same
/// digest. `ref` needs a tag and no digest (usage error otherwise).
Result<PublishedBundle> publish_bundle(oci::RegistryClient& registry,
                                       const std::string& archive,
                                       const oci::Reference& ref);

/// A shim bundle fetched from a registry: the verified bundle, and which artifact it came from.
struct FetchedBundle {
  bundle::LoadedBundle bundle;
  oci::Reference reference; ///< as asked for; its digest is the manifest's, verified
  oci::Descriptor layer;    ///< the archive the bundle was extracted from
};

/// Fetches the artifact publish_bundle() writes and loads it: `ref` must name a digest (usage
/// error otherwise: a tag can move under a recipe); the manifest, fetched by that digest, must
/// have publish_bundle's artifactType, config media type and exactly one layer of its media type
/// no larger than limits.max_total_bytes; the layer is downloaded, checked against its digest and
/// size and loaded with bundle::load_bundle_archive; the config must be the bundle.json inside
/// the archive, byte for byte. Registry failures and artifacts that are not a consistent shim
/// bundle fail with category registry (exit 4), naming the reference; a layer whose files do not
/// match its own bundle.json fails as the loader does (verification). The extracted copy lives
/// under `work_directory` (the system's temporary directory when empty) as long as the bundle
/// does; the downloaded archive is removed before returning.
Result<FetchedBundle> fetch_bundle(oci::RegistryClient& registry,
                                   const oci::Reference& ref,
                                   const std::string& work_directory = {},
                                   const util::ExtractLimits& limits = {});

} // namespace lume_unlock::transfer

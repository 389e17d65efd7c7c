#pragma once

#include "lume/client.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "signing/signing.hpp"
#include "util/progress.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::transfer {

/// Pull an image into a Lume VM, pinned by digest (DESIGN §8 step 2; lume-oci.md §6.3).
struct ImagePullRequest {
  oci::Reference reference; ///< as the user wrote it (tag and/or digest)
  std::string vm;           ///< local VM name
  std::chrono::milliseconds timeout{std::chrono::hours(6)};
  util::ProgressCallback progress;
  /// The recipe's trust: keys. When any is given, the resolved digest must carry a cosign
  /// signature by one of them (signing::verify_image_signature) before Lume is asked to pull
  /// or about the VM: a refusal (exit 6) leaves no VM and pulls no byte.
  std::vector<signing::TrustedKey> trusted_keys;
};

struct PulledImage {
  std::string reference;            ///< canonical reference pulled ("registry/repo:tag")
  oci::Digest digest;               ///< the verified manifest digest we resolved
  std::string lume_manifest_digest; ///< what Lume wrote to the VM's .manifest-digest
  bool changed = true;              ///< false: the VM already held exactly this digest
  /// The signature that vouched for the digest, when trusted keys were given.
  std::optional<signing::VerifiedSignature> signature;
};

/// What pull_image would do, observed without changing anything (for --dry-run).
struct ImagePullPlan {
  /// The resolved image; everything else is observed afterwards.
  ImagePullPlan(std::string reference_, oci::Digest digest_)
      : reference(std::move(reference_)), digest(std::move(digest_)) {}

  std::string reference;          ///< what Lume is asked to pull ("registry/org/name:tag")
  oci::Digest digest;             ///< the verified manifest digest of the reference
  lume::PullRequest lume_request; ///< the body of POST /lume/pull/start
  bool vm_exists = false;
  std::optional<std::string> vm_manifest_digest; ///< the existing VM's .manifest-digest
  bool in_place = false;         ///< the VM already holds exactly `digest`: nothing to do
  std::optional<Error> conflict; ///< why the pull would be refused (VM exists otherwise)
  /// The signature that vouched for `digest`, when the request has trusted keys.
  std::optional<signing::VerifiedSignature> signature;
};

/// Resolves and observes: the registry (manifest GET; HEAD of the sha256-<hex> tag for a
/// digest-only reference) and Lume (does the VM exist, from which digest). With trusted keys,
/// the resolved digest's signature is verified right after resolution, before Lume is asked
/// about the VM: the one check that both `pull --dry-run` and a real pull run, so a dry run
/// refuses an unsigned image (exit 6) with the real pull's message. Fails like pull_image for
/// resolution problems; a name conflict is reported in `conflict`.
Result<ImagePullPlan> plan_image_pull(lume::LumeApi& lume,
                                      oci::RegistryClient& registry,
                                      const ImagePullRequest& request);

/// Resolves the reference to a verified digest with `registry`; when the VM already exists with
/// that `.manifest-digest`, does nothing (changed = false); otherwise asks Lume to pull
/// (`POST /lume/pull/start` with registry/organization/name:tag; a digest-only reference is
/// pulled through its immutable `sha256-<hex>` tag, which must exist), reports
/// `downloadProgress`, and compares Lume's `.manifest-digest` with the resolved digest. A
/// mismatch is a registry error ("tag moved during pull", exit 4) that deletes nothing the user
/// had.
Result<PulledImage>
pull_image(lume::LumeApi& lume, oci::RegistryClient& registry, const ImagePullRequest& request);

} // namespace lume_unlock::transfer

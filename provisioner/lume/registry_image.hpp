#pragma once

#include "lume/types.hpp"
#include "oci/manifest.hpp"
#include "oci/reference.hpp"
#include "util/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::lume {

/// The immutable tag an image is reachable by when Lume can only address tags
/// (lume-oci.md §1.2): "sha256-<hex>", the same manifest bytes as the digest.
std::string digest_tag(const oci::Digest& digest);

/// An image as Lume names it in pulls and pushes: `name:tag` under `organization` on `registry`
/// (Lume builds the repository as <organization>/<name> and takes no digests).
struct LumeImage {
  std::string registry;
  std::string organization;
  std::string name;
  std::string tag;
  std::string reference() const { return registry + "/" + organization + "/" + name + ":" + tag; }
};

/// Splits `ref`'s repository at its first '/' into organization and name; `what` names the
/// operation in the error ("pull of 'x'", "push to 'x'"). A one-component repository is a usage
/// error: Lume always prepends an organization.
Result<LumeImage>
lume_image_for(const oci::Reference& ref, const std::string& tag, const std::string& what);

/// Lume 0.5.3 reaches registries over https only: ImageContainerRegistry.swift builds every
/// URL as https://<registry>/… (getToken, fetchManifest, downloadLayer, the uploads) and has no
/// insecure mode. Returns ok when `registry_url` (where our client reaches the registry Lume is
/// to be sent to, e.g. "https://host:5000") is https; otherwise a usage Error (exit 2) for
/// `what`, so the refusal comes before Lume is asked.
Status require_https_registry(const std::string& registry_url, const std::string& what);

/// Lume replaces its defaults: when a pull or push names registry "ghcr.io" and organization
/// "trycua", RegistryFactory.createRegistry uses the registry of Lume's config.yaml instead
/// (`registry.ghcr.registry` / `.organization`, or the GCS backend for `registry.type: gcs`).
/// Returns ok when `image` is not on the defaults or Lume's setting is the defaults too;
/// otherwise a usage Error (exit 2) naming Lume's setting, since Lume would fetch another image
/// than the one resolved and checked here.
Status require_no_registry_override(const LumeImage& image,
                                    const RegistrySetting& setting,
                                    const std::string& what);

/// What GET /lume/logs answers as `info` when Lume was not started as its LaunchAgent (no
/// /tmp/lume_daemon.log; lume-api.md §3.19): not an error, the log just cannot be seen.
inline constexpr std::string_view k_info_log_missing = "Info log file not found";

/// A background push that Lume reports as failed in its log.
struct PushFailure {
  /// Lume's text after "- Error: " (PushError's localizedDescription, often only
  /// "The operation couldn’t be completed. (lume.PushError error 3.)").
  std::string lume_error;
  /// Logger.error lines ("[<ISO8601>] ERROR: …") printed since the push started, which say
  /// more (e.g. "Missing GitHub credentials…"); at most the last three.
  std::vector<std::string> logged_errors;
};

/// Looks in `log_since_push` (Lume's stdout from the push on) for the line Handlers.swift
/// handlePush prints when a push of `image_name` with `tags` fails:
/// "Background push failed for image: NAME:TAG1,TAG2 - Error: TEXT". Returns nullopt when there
/// is no such line (the push still runs, or succeeded).
std::optional<PushFailure> find_push_failure(std::string_view log_since_push,
                                             const std::string& image_name,
                                             const std::vector<std::string>& tags);

/// Whether a manifest in the registry is the push of a local Lume VM directory. Lume never says
/// what it pushed (lume-oci.md §2.4), and someone else may move the tag between the push and our
/// read, so the manifest is checked against the VM's own bytes: the NVRAM layer's digest is the
/// SHA-256 of nvram.bin (stored uncompressed), and every disk layer's
/// `org.trycua.lume.content.uncompressed-digest` is the SHA-256 of its slice of disk.img
/// (`part.offset`, `content.uncompressed-size`), the slices covering the whole disk.
struct PushedImageCheck {
  std::vector<std::string>
      differences; ///< "disk.img.part.3 (offset …): sha256:… here, sha256:… in the registry"
  std::uint64_t disk_bytes_hashed = 0;
  bool matches() const { return differences.empty(); }
};

/// Compares `manifest` with `vm_dir` (holding nvram.bin and disk.img). Fails (category registry,
/// "cannot be verified") when the manifest is not a Lume OCI image or lacks the annotations the
/// comparison needs, and (category failure) when the VM's files cannot be read.
Result<PushedImageCheck> check_pushed_image(const oci::Manifest& manifest,
                                            const std::string& vm_dir,
                                            const std::string& what);

} // namespace lume_unlock::lume

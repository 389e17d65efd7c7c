#include "transfer/image_push.hpp"

#include "lume/client.hpp"
#include "lume/registry_image.hpp"
#include "oci/manifest.hpp"
#include "provenance/provenance.hpp"

#include <thread>

namespace lume_unlock::transfer {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::string seconds_text(milliseconds elapsed) {
  return std::to_string(duration_cast<seconds>(elapsed).count()) + " s";
}

/// Watches Lume's stdout log (GET /lume/logs, `info`) for this push's failure line: Lume's push
/// answers 202 and reports a failure only there (Handlers.swift handlePush).
class LumeLogWatch {
public:
  LumeLogWatch(lume::LumeApi& lume, std::string image_name, std::vector<std::string> tags)
      : m_lume(lume), m_image_name(std::move(image_name)), m_tags(std::move(tags)) {}

  /// Notes where the log ends before the push, so an older failure of the same image is not
  /// taken for this one. Returns why the log cannot be seen, or nullopt when it can.
  std::optional<std::string> start() {
    auto logs = m_lume.logs();
    if (!logs.ok()) {
      return "GET /lume/logs failed: " + logs.error().why();
    }
    if (logs.value().info == lume::k_info_log_missing) {
      return "Lume answers \"" + std::string(lume::k_info_log_missing) +
             "\" (it writes /tmp/lume_daemon.log only when run as its LaunchAgent)";
    }
    m_offset = logs.value().info.size();
    m_visible = true;
    return std::nullopt;
  }

  /// The failure line for this push, if Lume has printed it since start(). A log that cannot
  /// be read now is not a failure: the wait goes on.
  std::optional<lume::PushFailure> failure() {
    if (!m_visible) {
      return std::nullopt;
    }
    auto logs = m_lume.logs();
    if (!logs.ok()) {
      return std::nullopt;
    }
    const std::string& info = logs.value().info;
    const std::size_t from = info.size() >= m_offset ? m_offset : 0; // a rotated log restarts
    return lume::find_push_failure(std::string_view(info).substr(from), m_image_name, m_tags);
  }

private:
  lume::LumeApi& m_lume;
  std::string m_image_name;
  std::vector<std::string> m_tags;
  std::size_t m_offset = 0;
  bool m_visible = false;
};

Error push_failed_error(const std::string& what, const lume::PushFailure& failure) {
  std::string why = "Lume's log says the push failed: " + failure.lume_error;
  for (const auto& line : failure.logged_errors) {
    why += "\n  " + line;
  }
  return Error(ErrorCategory::lume_api,
               what,
               why,
               "Lume pushes with credentials from the environment of `lume serve` "
               "(GITHUB_USERNAME and GITHUB_TOKEN, or GHCR_USERNAME and GHCR_TOKEN) and needs a "
               "registry with a token realm at https://<registry>/token; fix that, restart "
               "`lume serve` and run the command again; nothing was recorded");
}

/// One line of the push step's progress.
void report_push(const ImagePushRequest& request, const std::string& detail) {
  if (request.progress) {
    request.progress({"push", std::nullopt, std::nullopt, "", detail, false});
  }
}

/// Polls the registry until the tag moves away from `previous` (Lume's push landed), failing as
/// soon as Lume's log shows this push failed, or when the request's timeout passes.
Status wait_for_tag_to_move(oci::RegistryClient& registry,
                            const ImagePushRequest& request,
                            const std::optional<oci::Digest>& previous,
                            LumeLogWatch& log_watch,
                            const std::string& what) {
  const oci::Reference& target = request.target;
  const auto report = [&](const std::string& detail) { report_push(request, detail); };
  const auto sleep =
      request.sleep ? request.sleep : [](milliseconds d) { std::this_thread::sleep_for(d); };
  milliseconds waited{0};
  for (;;) {
    LUME_UNLOCK_TRY_ASSIGN(auto now, registry.find_manifest(target));
    if (now && (!previous || now->digest != *previous)) {
      break;
    }
    if (auto failed = log_watch.failure()) {
      return push_failed_error(what, *failed);
    }
    if (waited >= request.timeout) {
      return Error(ErrorCategory::lume_api,
                   what,
                   "the tag did not move within " + seconds_text(waited) +
                       "; Lume reports push failures only in its log",
                   "read the output of `lume serve` (for ghcr.io Lume needs GITHUB_USERNAME and "
                   "GITHUB_TOKEN in its environment), fix the cause and run the command again; "
                   "nothing was recorded");
    }
    sleep(request.poll_interval);
    waited += request.poll_interval;
    report("waiting for Lume's push to reach " + target.registry + " (" + seconds_text(waited) +
           " elapsed)");
  }

  return ok_status();
}

/// The manifest the tag now names must be this VM's push: its layers are the VM's disk.
Result<lume::PushedImageCheck> check_push_is_ours(lume::LumeApi& lume,
                                                  const ImagePushRequest& request,
                                                  const oci::FetchedManifest& manifest,
                                                  const std::string& what) {
  LUME_UNLOCK_TRY_ASSIGN(auto vm_dir, lume::vm_directory(lume, request.vm));
  LUME_UNLOCK_TRY_ASSIGN(auto check, lume::check_pushed_image(manifest.manifest, vm_dir, what));
  if (!check.matches()) {
    std::string differences;
    for (const auto& d : check.differences) {
      differences += "\n  " + d;
    }
    return Error(
        ErrorCategory::registry,
        what,
        "the tag now points at " + manifest.digest.str() +
            ", which is not this VM's push (someone else pushed to the tag?):" + differences,
        "nothing was recorded; push to a tag only you use and run the command again");
  }

  return check;
}

/// PUTs manifest `bytes` under the immutable tag sha256-<hex> in `target`'s repository and
/// returns the tag; a registry error naming `what` when the registry stores other bytes.
Result<std::string> put_immutable_tag(oci::RegistryClient& registry,
                                      const oci::Reference& target,
                                      const std::string& bytes,
                                      const std::string& media_type,
                                      const oci::Digest& digest,
                                      const std::string& what) {
  oci::Reference immutable = target;
  immutable.tag = lume::digest_tag(digest);
  immutable.digest.reset();
  LUME_UNLOCK_TRY_ASSIGN(auto tagged, registry.push_manifest(immutable, bytes, media_type));
  if (tagged != digest) {
    return Error(ErrorCategory::registry,
                 what,
                 "the registry stored the immutable tag as " + tagged.str() + ", not " +
                     digest.str(),
                 "nothing was recorded; check the registry");
  }
  return *immutable.tag;
}

} // namespace

Result<PushedImage>
push_image(lume::LumeApi& lume, oci::RegistryClient& registry, const ImagePushRequest& request) {
  const oci::Reference& target = request.target;
  const std::string what = "push of VM '" + request.vm + "' to '" + target.str() + "'";
  if (!target.tag || target.digest) {
    return Error(ErrorCategory::usage,
                 what,
                 "the target needs a tag and no digest (Lume pushes tags; the digest is only "
                 "known afterwards)",
                 "use REGISTRY/ORG/NAME:TAG");
  }
  LUME_UNLOCK_TRY_ASSIGN(auto image, lume::lume_image_for(target, *target.tag, what));
  LUME_UNLOCK_TRY(lume::require_https_registry(registry.base_url(target.registry), what));
  LUME_UNLOCK_TRY_ASSIGN(auto lume_config, lume.config());
  LUME_UNLOCK_TRY(lume::require_no_registry_override(image, lume_config.registry, what));
  const auto report = [&](const std::string& detail) { report_push(request, detail); };

  // What the tag points at before: a push is seen as the tag moving away from it. This also
  // checks that we can read the registry (credentials) before Lume spends an hour uploading.
  LUME_UNLOCK_TRY_ASSIGN(auto before, registry.find_manifest(target));
  const std::optional<oci::Digest> previous =
      before ? std::optional<oci::Digest>(before->digest) : std::nullopt;

  lume::PushRequest push;
  push.name = request.vm;
  push.image_name = image.name;
  push.tags = {*target.tag};
  push.registry = image.registry;
  push.organization = image.organization;
  push.chunk_size_mb = request.chunk_size_mb;
  LumeLogWatch log_watch(lume, push.image_name, push.tags);
  const std::optional<std::string> log_unseen = log_watch.start();
  LUME_UNLOCK_TRY(lume.push(push));
  report("Lume is pushing '" + request.vm + "' to " + target.str());
  if (log_unseen && request.progress) {
    // A one-line notice of its own (finished), so the renderer's once-a-second throttle of the
    // push step's updates cannot swallow it.
    request.progress({"Lume's log",
                      std::nullopt,
                      std::nullopt,
                      "",
                      "cannot see Lume's log (" + *log_unseen +
                          "): a failed push shows only when the " + seconds_text(request.timeout) +
                          " deadline passes",
                      true});
  }

  LUME_UNLOCK_TRY(wait_for_tag_to_move(registry, request, previous, log_watch, what));

  LUME_UNLOCK_TRY_ASSIGN(auto fetched, registry.get_manifest(target));
  const oci::FetchedManifest& manifest = fetched;
  report("checking " + manifest.digest.str() + " against the VM's disk");
  LUME_UNLOCK_TRY_ASSIGN(auto check, check_push_is_ours(lume, request, manifest, what));

  std::string immutable_tag;
  if (request.tag_immutable) {
    LUME_UNLOCK_TRY_ASSIGN(
        immutable_tag,
        put_immutable_tag(
            registry, target, manifest.bytes, manifest.media_type, manifest.digest, what));
  }

  PushedImage pushed{target,
                     manifest.digest,
                     target.pinned(manifest.digest).str(),
                     immutable_tag,
                     {},
                     check.disk_bytes_hashed};
  auto upload_time = manifest.manifest.annotations.find(oci::annotation::lume_upload_time);
  pushed.pushed_at = upload_time != manifest.manifest.annotations.end() ? upload_time->second
                                                                        : provenance::rfc3339_now();
  return pushed;
}

Result<PushedImage> annotate_pushed_image(oci::RegistryClient& registry,
                                          const PushedImage& pushed,
                                          const oci::Annotations& annotations) {
  const std::string what = "annotating " + pushed.pinned;
  // By digest: the bytes are those push_image checked against the VM's disk, whatever the
  // tag says now.
  LUME_UNLOCK_TRY_ASSIGN(auto fetched,
                         registry.get_manifest(pushed.reference.pinned(pushed.digest)));
  LUME_UNLOCK_TRY_ASSIGN(auto bytes, oci::with_manifest_annotations(fetched.bytes, annotations));
  LUME_UNLOCK_TRY_ASSIGN(auto annotated, oci::parse_manifest(bytes));
  if (!(annotated.config == fetched.manifest.config) ||
      !(annotated.layers == fetched.manifest.layers) ||
      annotated.media_type != fetched.manifest.media_type) {
    return Error(ErrorCategory::registry,
                 what,
                 "the annotated manifest names other blobs than the pushed one",
                 "nothing was recorded; report this as a bug");
  }
  const oci::Digest digest = oci::Digest::of_bytes(bytes);

  // The tag must still be this push's: replacing someone else's image would be worse than not
  // annotating.
  LUME_UNLOCK_TRY_ASSIGN(auto current, registry.find_manifest(pushed.reference));
  if (!current || (current->digest != pushed.digest && current->digest != digest)) {
    return Error(ErrorCategory::registry,
                 what,
                 "the tag " + pushed.reference.str() + " no longer points at the push (" +
                     (current ? "now " + current->digest.str() : std::string("gone")) + ")",
                 "nothing was recorded; push to a tag only you use and run the command again");
  }
  LUME_UNLOCK_TRY_ASSIGN(auto stored,
                         registry.push_manifest(pushed.reference, bytes, fetched.media_type));
  if (stored != digest) {
    return Error(ErrorCategory::registry,
                 what,
                 "the registry stored the annotated manifest as " + stored.str() + ", not " +
                     digest.str(),
                 "nothing was recorded; check the registry");
  }
  // The immutable tag names the annotated digest, the one recorded and signed. Lume's own
  // manifest (the old digest) was never given one (push_image ran with tag_immutable off), so
  // no tag names a digest nobody recorded. It is left in the registry untagged, not deleted:
  // deleting a manifest is optional in the distribution spec (docker-registry only with
  // storage.delete.enabled, ghcr.io not through this API), a failure there would fail a
  // finished bake for nothing, and a registry's garbage collection reclaims untagged
  // manifests while the blobs stay shared with the annotated one.
  LUME_UNLOCK_TRY_ASSIGN(
      auto immutable_tag,
      put_immutable_tag(registry, pushed.reference, bytes, fetched.media_type, digest, what));

  PushedImage out = pushed;
  out.digest = digest;
  out.pinned = pushed.reference.pinned(digest).str();
  out.immutable_tag = immutable_tag;
  return out;
}

} // namespace lume_unlock::transfer

#include "transfer/image_push.hpp"

#include "lume/image_name.hpp"
#include "lume/pushed_image_check.hpp"
#include "lume/vm_storage.hpp"
#include "oci/media_types.hpp"
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
  const auto report = [&](const std::string& detail) {
    if (request.progress) {
      request.progress({"push", std::nullopt, std::nullopt, "", detail, false});
    }
  };
  const auto sleep =
      request.sleep ? request.sleep : [](milliseconds d) { std::this_thread::sleep_for(d); };

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
  LUME_UNLOCK_TRY(lume.push(push));
  report("Lume is pushing '" + request.vm + "' to " + target.str());

  milliseconds waited{0};
  for (;;) {
    LUME_UNLOCK_TRY_ASSIGN(auto now, registry.find_manifest(target));
    if (now && (!previous || now->digest != *previous)) {
      break;
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
           ")");
  }

  LUME_UNLOCK_TRY_ASSIGN(auto fetched, registry.get_manifest(target));
  const oci::FetchedManifest& manifest = fetched;
  report("checking " + manifest.digest.str() + " against the VM's disk");
  LUME_UNLOCK_TRY_ASSIGN(auto check,
                         lume::check_pushed_image(manifest.manifest,
                                                  lume::vm_directory(request.lume_home, request.vm),
                                                  what));
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

  oci::Reference immutable = target;
  immutable.tag = lume::digest_tag(manifest.digest);
  LUME_UNLOCK_TRY_ASSIGN(auto tagged,
                         registry.push_manifest(immutable, manifest.bytes, manifest.media_type));
  if (tagged != manifest.digest) {
    return Error(ErrorCategory::registry,
                 what,
                 "the registry stored the immutable tag as " + tagged.str() + ", not " +
                     manifest.digest.str(),
                 "nothing was recorded; check the registry");
  }

  PushedImage pushed{target,
                     manifest.digest,
                     target.pinned(manifest.digest).str(),
                     *immutable.tag,
                     {},
                     check.disk_bytes_hashed};
  auto upload_time = manifest.manifest.annotations.find(oci::annotation::lume_upload_time);
  pushed.pushed_at = upload_time != manifest.manifest.annotations.end() ? upload_time->second
                                                                        : provenance::rfc3339_now();
  return pushed;
}

} // namespace lume_unlock::transfer

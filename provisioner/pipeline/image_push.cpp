#include "pipeline/image_push.hpp"

#include "oci/media_types.hpp"
#include "pipeline/lume_image.hpp"
#include "pipeline/pushed_image_check.hpp"
#include "provenance/provenance.hpp"

#include <thread>

namespace lume_unlock::pipeline {

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
  auto image = lume_image_for(target, *target.tag, what);
  if (!image.ok()) {
    return image.error();
  }
  const auto report = [&](const std::string& detail) {
    if (request.progress) {
      request.progress({"push", std::nullopt, std::nullopt, "", detail, false});
    }
  };
  const auto sleep =
      request.sleep ? request.sleep : [](milliseconds d) { std::this_thread::sleep_for(d); };

  // What the tag points at before: a push is seen as the tag moving away from it. This also
  // checks that we can read the registry (credentials) before Lume spends an hour uploading.
  auto before = registry.find_manifest(target);
  if (!before.ok()) {
    return before.error();
  }
  const std::optional<oci::Digest> previous =
      before.value() ? std::optional<oci::Digest>(before.value()->digest) : std::nullopt;

  lume::PushRequest push;
  push.name = request.vm;
  push.image_name = image.value().name;
  push.tags = {*target.tag};
  push.registry = image.value().registry;
  push.organization = image.value().organization;
  push.chunk_size_mb = request.chunk_size_mb;
  if (auto sent = lume.push(push); !sent.ok()) {
    return sent.error();
  }
  report("Lume is pushing '" + request.vm + "' to " + target.str());

  milliseconds waited{0};
  for (;;) {
    auto now = registry.find_manifest(target);
    if (!now.ok()) {
      return now.error();
    }
    if (now.value() && (!previous || now.value()->digest != *previous)) {
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

  auto fetched = registry.get_manifest(target);
  if (!fetched.ok()) {
    return fetched.error();
  }
  const oci::FetchedManifest& manifest = fetched.value();
  report("checking " + manifest.digest.str() + " against the VM's disk");
  auto check = check_pushed_image(manifest.manifest, request.lume_home + "/" + request.vm, what);
  if (!check.ok()) {
    return check.error();
  }
  if (!check.value().matches()) {
    std::string differences;
    for (const auto& d : check.value().differences) {
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
  immutable.tag = digest_tag(manifest.digest);
  auto tagged = registry.push_manifest(immutable, manifest.bytes, manifest.media_type);
  if (!tagged.ok()) {
    return tagged.error();
  }
  if (tagged.value() != manifest.digest) {
    return Error(ErrorCategory::registry,
                 what,
                 "the registry stored the immutable tag as " + tagged.value().str() + ", not " +
                     manifest.digest.str(),
                 "nothing was recorded; check the registry");
  }

  PushedImage pushed{target,
                     manifest.digest,
                     target.pinned(manifest.digest).str(),
                     *immutable.tag,
                     {},
                     check.value().disk_bytes_hashed};
  auto upload_time = manifest.manifest.annotations.find(oci::annotation::lume_upload_time);
  pushed.pushed_at = upload_time != manifest.manifest.annotations.end() ? upload_time->second
                                                                        : provenance::rfc3339_now();
  return pushed;
}

} // namespace lume_unlock::pipeline

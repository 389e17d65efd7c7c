#include "transfer/image_pull.hpp"

#include "lume/client.hpp"
#include "lume/registry_image.hpp"
#include "util/atomic_file.hpp"

#include <filesystem>
#include <system_error>

namespace lume_unlock::transfer {

namespace {

/// The digest to pin and the tag Lume pulls. A tag is resolved (verified GET); a digest is
/// fetched by digest (verified) and pulled through the reference's own tag while that tag still
/// names it ("repo:tag@sha256:…", as lock files pin images), else through its `sha256-<hex>`
/// tag, which must exist and point at the same manifest.
struct Resolved {
  oci::Digest digest;
  std::string tag;
};

/// How to keep an image whose tag moved on in someone else's registry: its bytes by digest,
/// copied into a registry the user controls under the `sha256-<hex>` tag Lume can pull.
std::string keep_bytes_hint(const oci::Reference& ref, const oci::Digest& digest) {
  const std::string name = ref.repository.substr(ref.repository.rfind('/') + 1);
  return "keep the published bytes while " + ref.registry +
         " still serves them by digest: copy them into a registry you control, `skopeo copy "
         "--preserve-digests docker://" +
         ref.repository_path() + "@" + digest.str() + " docker://<your-registry>/<org>/" + name +
         ":" + lume::digest_tag(digest) +
         "`, and point the recipe's source.image there (<your-"
         "registry>/<org>/" +
         name + "@" + digest.str() + "; registry.ca for a private CA)";
}

Result<Resolved> resolve(oci::RegistryClient& registry, const oci::Reference& ref) {
  if (!ref.digest) {
    LUME_UNLOCK_TRY_ASSIGN(auto fetched, registry.get_manifest(ref));
    return Resolved{fetched.digest, ref.tag.value_or("latest")};
  }
  const oci::Digest& digest = *ref.digest;
  std::string moved; // the recipe's tag now names other bytes: says which
  if (ref.tag) {
    // Lume pulls by tag, and .manifest-digest is checked after the pull, so a tag that moves
    // meanwhile is still caught. Upstream images (trycua's) carry no sha256-<hex> tag.
    oci::Reference own_tag = ref;
    own_tag.digest.reset();
    auto head = registry.head_manifest(own_tag);
    if (head.ok() && head.value().digest == digest) {
      LUME_UNLOCK_TRY(registry.get_manifest(ref)); // verifies the bytes against the digest
      return Resolved{digest, *ref.tag};
    }
    if (head.ok()) {
      moved = "the tag '" + own_tag.str() + "' moved: it names " + head.value().digest.str() +
              ", not the pinned " + digest.str() + ", and ";
    }
  }
  oci::Reference by_tag = ref;
  by_tag.digest.reset();
  by_tag.tag = lume::digest_tag(digest);
  const std::string what = "pull of '" + ref.str() + "'";
  const std::string hint =
      !moved.empty() ? keep_bytes_hint(ref, digest)
                     : "Lume pulls only by tag: push the image with the tag '" + *by_tag.tag +
                           "' (lume-unlock bake does), e.g. `skopeo copy "
                           "--preserve-digests docker://" +
                           ref.str() + " docker://" + by_tag.str() + "`";
  auto head = registry.head_manifest(by_tag);
  if (!head.ok()) {
    return Error(ErrorCategory::registry,
                 what,
                 moved + "the immutable tag '" + by_tag.str() +
                     "' is not available: " + head.error().why(),
                 hint);
  }
  if (head.value().digest != digest) {
    return Error(ErrorCategory::registry,
                 what,
                 "the tag '" + by_tag.str() + "' points at " + head.value().digest.str() +
                     ", not at " + digest.str(),
                 hint);
  }
  LUME_UNLOCK_TRY(registry.get_manifest(ref)); // verifies the bytes against the digest
  return Resolved{digest, *by_tag.tag};
}

} // namespace

Result<ImagePullPlan> plan_image_pull(lume::LumeApi& lume,
                                      oci::RegistryClient& registry,
                                      const ImagePullRequest& request) {
  const oci::Reference& ref = request.reference;
  const std::string refused = "pull of '" + ref.str() + "'";
  // Refusals that need no registry come first: where Lume would really fetch from.
  LUME_UNLOCK_TRY(lume::require_https_registry(registry.base_url(ref.registry), refused));
  LUME_UNLOCK_TRY_ASSIGN(auto named,
                         lume::lume_image_for(ref, ref.tag.value_or("latest"), refused));
  LUME_UNLOCK_TRY_ASSIGN(auto lume_config, lume.config());
  LUME_UNLOCK_TRY(lume::require_no_registry_override(named, lume_config.registry, refused));
  LUME_UNLOCK_TRY_ASSIGN(auto resolved, resolve(registry, ref));
  LUME_UNLOCK_TRY_ASSIGN(auto image, lume::lume_image_for(ref, resolved.tag, refused));
  ImagePullPlan plan(image.reference(), resolved.digest);
  if (!request.trusted_keys.empty()) {
    // Even when the VM holds the digest already: a recipe that demands a signature never
    // accepts an unsigned image.
    LUME_UNLOCK_TRY_ASSIGN(
        plan.signature,
        signing::verify_image_signature(registry, ref.pinned(plan.digest), request.trusted_keys));
  }
  plan.lume_request.image = image.name + ":" + image.tag;
  plan.lume_request.name = request.vm;
  plan.lume_request.registry = image.registry;
  plan.lume_request.organization = image.organization;
  const std::string what = "pull of '" + plan.reference + "' into VM '" + request.vm + "'";

  auto existing = lume.find(request.vm);
  if (existing.ok()) {
    if (existing.value() && std::holds_alternative<lume::PullProgress>(*existing.value())) {
      return Error(ErrorCategory::lume_api,
                   what,
                   "Lume is already pulling into VM '" + request.vm + "'",
                   "wait for that pull to finish (`lume ls`), then run this again");
    }
    plan.vm_exists = existing.value().has_value();
  } else if (lume::is_sticky_pull_failure(existing.error())) {
    // An earlier failed pull masks the VM in Lume's answers; the directory tells the truth.
    LUME_UNLOCK_TRY_ASSIGN(auto vm_dir, lume::vm_directory(lume, request.vm));
    std::error_code ec;
    plan.vm_exists = std::filesystem::exists(vm_dir + "/config.json", ec);
  } else {
    return existing.error().with_context(what);
  }
  if (plan.vm_exists) {
    LUME_UNLOCK_TRY_ASSIGN(auto vm_dir, lume::vm_directory(lume, request.vm));
    auto have = lume::read_manifest_digest(vm_dir);
    if (have.ok()) {
      plan.vm_manifest_digest = have.value();
    }
    plan.in_place = plan.vm_manifest_digest == plan.digest.str();
    if (!plan.in_place) {
      // Lume would refuse too; its --force (not even offered over HTTP) deletes the VM first.
      plan.conflict = Error(
          ErrorCategory::usage,
          what,
          "VM '" + request.vm + "' already exists" +
              (have.ok() ? " and was pulled from " + have.value() + ", not " + plan.digest.str()
                         : " and was not pulled from a registry"),
          "pick another name, or remove the VM first (`lume delete " + request.vm + "`)");
    }
  }
  return plan;
}

Result<PulledImage>
pull_image(lume::LumeApi& lume, oci::RegistryClient& registry, const ImagePullRequest& request) {
  LUME_UNLOCK_TRY_ASSIGN(auto planned, plan_image_pull(lume, registry, request));
  const ImagePullPlan& plan = planned;
  if (plan.conflict) {
    return *plan.conflict;
  }
  // plan_image_pull verified the signature, when trusted keys were given, before Lume was asked.
  PulledImage result{plan.reference,
                     plan.digest,
                     plan.vm_manifest_digest.value_or(""),
                     !plan.in_place,
                     plan.signature};
  if (plan.in_place) {
    return result;
  }
  const oci::Digest& digest = plan.digest;
  const std::string what = "pull of '" + result.reference + "' into VM '" + request.vm + "'";

  LUME_UNLOCK_TRY(lume.pull_start(plan.lume_request));
  lume::WaitOptions wait;
  wait.what = "Lume to pull '" + result.reference + "' into VM '" + request.vm + "'";
  wait.timeout = request.timeout;
  wait.progress = request.progress;
  auto finished = lume::wait_until(lume, request.vm, lume::is_pull_finished, wait);
  LUME_UNLOCK_TRY_ASSIGN(auto vm_dir, lume::vm_directory(lume, request.vm));
  if (!finished.ok()) {
    if (lume::is_sticky_pull_failure(finished.error())) {
      return finished.error().with_hint(
          "Lume keeps answering this for '" + request.vm +
          "' until another pull under that name starts; fix the cause (a leftover directory "
          "in " +
          vm_dir + ", the registry, the network), then run the pull again");
    }
    return finished.error();
  }

  auto pulled = lume::read_manifest_digest(vm_dir);
  if (!pulled.ok()) {
    return pulled.error().with_context(what);
  }
  result.lume_manifest_digest = pulled.value();
  if (pulled.value() != digest.str()) {
    // Nothing is deleted: the VM is left as Lume pulled it, for the user to inspect.
    return Error(ErrorCategory::registry,
                 what,
                 "tag moved during pull: resolved " + digest.str() + " but Lume pulled " +
                     pulled.value(),
                 "VM '" + request.vm + "' was left as Lume pulled it (" + vm_dir +
                     "); inspect or delete it (`lume delete " + request.vm +
                     "`), then pull again; or " + keep_bytes_hint(request.reference, digest));
  }
  return result;
}

} // namespace lume_unlock::transfer

#include "pipeline/bake.hpp"

#include "lume/client.hpp"
#include "oci/manifest.hpp"
#include "provenance/provenance.hpp"
#include "signing/signing.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <filesystem>

namespace lume_unlock::pipeline {

namespace {

std::optional<recipe::LockFile> read_lock(const std::string& path) {
  if (!util::path_exists(path)) {
    return std::nullopt;
  }
  return recipe::load_lock_file(path).value_or_throw();
}

} // namespace

recipe::LockFile lock_after_bake(const std::optional<recipe::LockFile>& existing,
                                 const std::string& recipe_path,
                                 const std::string& recipe_sha256,
                                 const std::optional<recipe::LockedReference>& source_pin,
                                 const recipe::BakedImage& baked,
                                 const std::string& now) {
  recipe::LockFile lock;
  if (existing) {
    lock = *existing;
  }
  if (!existing || existing->recipe_sha256 != recipe_sha256) {
    // A lock of other recipe bytes pins nothing for this recipe: pin what the bake used.
    lock.recipe_path = recipe_path;
    lock.recipe_sha256 = recipe_sha256;
    lock.references.clear();
    if (source_pin) {
      lock.references.push_back(*source_pin);
    }
    lock.created_at = now;
  }
  lock.baked.push_back(baked);
  return lock;
}

BakePipeline::BakePipeline(BakeOptions options, CreateServices services)
    : m_options(std::move(options)), m_services(services), m_create(m_options.create, services) {}

Plan BakePipeline::plan() {
  if (!m_options.create.recipe) {
    throw Error(
        ErrorCategory::usage, "bake", "no recipe given", "lume-unlock bake RECIPE --push REF");
  }
  // Read access to the target before anything else: a registry that needs credentials fails
  // now, not after the create and an hour of upload.
  const auto current = m_services.registry.find_manifest(m_options.target).value_or_throw();
  const Plan create_plan = m_create.plan();
  Plan plan("bake");
  for (Step step : create_plan.steps()) {
    if (step.id == "bench") {
      // A gate that fails stops the bake before anything is pushed: say so.
      step.apply = [apply = step.apply] {
        try {
          return apply();
        } catch (const Error& error) {
          throw error.with_hint(error.hint().empty() ? "nothing was pushed"
                                                     : error.hint() + "; nothing was pushed");
        }
      };
    }
    plan.add(std::move(step));
  }
  const bool bench = m_options.create.bench.has_value();
  const std::string& vm = m_options.create.vm;
  plan.add(Step::unobserved("stop", "stop '" + vm + "' so its disk is consistent", [this] {
    return step_result(
        lume::stop_vm(
            m_services.lume, m_options.create.vm, m_options.stop_timeout, m_services.progress)
            .value_or_throw());
  }));
  plan.add(Step::observed_as("push",
                             "push '" + vm + "' to " + m_options.target.str() +
                                 " through Lume, resolve the digest, check it against the VM's "
                                 "disk" +
                                 (bench ? "" : ", tag it sha256-<hex>"),
                             false,
                             current ? "the tag points at " + current->digest.str() + " now"
                                     : "the tag does not exist yet",
                             [this] { return step_push(); }));
  if (bench) {
    plan.add(Step::to_do("annotate",
                         "add the bench figures to the pushed manifest (" +
                             std::string(oci::annotation::lume_unlock_bench_prefix) +
                             "*), put it under the tag and sha256-<hex> of its new digest",
                         [this] { return step_annotate(); }));
  }
  if (m_options.sign_key) {
    plan.add(Step::to_do("sign",
                         "sign the pushed digest with " +
                             m_options.sign_key->public_key().fingerprint() +
                             " (cosign layout: tag sha256-<hex>.sig)",
                         [this] { return step_sign(); }));
  }
  plan.add(Step::to_do("record",
                       "record the digest in " +
                           recipe::lock_path_for(m_options.create.recipe->path) +
                           " and the host state",
                       [this] { return step_record(); }));
  return plan;
}

StepResult BakePipeline::step_push() {
  transfer::ImagePushRequest request;
  request.vm = m_options.create.vm;
  request.target = m_options.target;
  request.chunk_size_mb = m_options.chunk_size_mb;
  request.timeout = m_options.push_timeout;
  request.poll_interval = m_options.push_poll_interval;
  request.progress = m_services.progress;
  // With a bench the annotate step changes the digest: the immutable tag goes on that one.
  request.tag_immutable = !m_options.create.bench;
  transfer::PushedImage pushed =
      transfer::push_image(m_services.lume, m_services.registry, request).value_or_throw();
  m_outcome.pushed = pushed;
  return {true,
          "pushed " + pushed.pinned +
              (pushed.immutable_tag.empty() ? "" : " (also tagged " + pushed.immutable_tag + ")")};
}

StepResult BakePipeline::step_annotate() {
  const auto& bench = m_create.outcome().bench;
  if (!bench) {
    throw Error(ErrorCategory::failure,
                "bake step 'annotate'",
                "the bench step left no figures",
                "report this as a bug");
  }
  const oci::Annotations annotations = bench_annotations(bench->record);
  transfer::PushedImage annotated =
      transfer::annotate_pushed_image(m_services.registry, *m_outcome.pushed, annotations)
          .value_or_throw();
  const std::string lume_digest = m_outcome.pushed->digest.str();
  m_outcome.pushed = annotated;
  return {true,
          std::to_string(annotations.size()) + " annotations: " + annotated.pinned +
              " (also tagged " + annotated.immutable_tag + "; Lume's " + lume_digest +
              " left untagged)"};
}

StepResult BakePipeline::step_sign() {
  const transfer::PushedImage& pushed = *m_outcome.pushed;
  nlohmann::json summary = {{"lume-unlock", m_options.version},
                            {"recipe_sha256", m_create.recipe().sha256}};
  if (m_options.create.bundle_artifact && m_options.create.bundle_artifact->digest) {
    summary["shim_bundle_digest"] = m_options.create.bundle_artifact->digest->str();
  } else {
    // A local bundle: the SHA-256 of its bundle.json pins every file (as --version shows it).
    auto hex = util::sha256_file_hex(m_services.bundle.root() + "/bundle.json");
    if (hex) {
      summary["shim_bundle_digest"] = "sha256:" + hex.value();
    }
  }
  const oci::Reference pinned = pushed.reference.pinned(pushed.digest);
  m_outcome.signature =
      signing::sign_image(m_services.registry, pinned, *m_options.sign_key, summary)
          .value_or_throw();
  return {!m_outcome.signature->already_signed,
          "signed " + pinned.str() + " with " + m_outcome.signature->key_fingerprint};
}

StepResult BakePipeline::step_record() {
  const transfer::PushedImage& pushed = *m_outcome.pushed;
  const CreateOutcome& created = m_create.outcome();
  const std::string& recipe_path = m_create.recipe().path;

  recipe::BakedImage baked;
  baked.reference = pushed.reference.str();
  baked.digest = pushed.digest.str();
  baked.pinned = pushed.pinned;
  baked.pushed_at = pushed.pushed_at;
  baked.recipe_sha256 = m_create.recipe().sha256;
  if (m_outcome.signature) {
    baked.signed_by = m_outcome.signature->key_fingerprint;
  }
  if (created.record && created.record->shim && created.record->shim->files) {
    for (const auto& file : *created.record->shim->files) {
      baked.shim_files.push_back({file.path, file.sha256});
    }
  }

  std::optional<recipe::LockedReference> source_pin;
  if (!m_options.create.from && m_create.recipe().source.image && created.image) {
    recipe::LockedReference pin;
    pin.field = "source.image";
    pin.reference = *m_create.recipe().source.image;
    pin.digest = created.image->digest.str();
    if (created.image->signature) {
      pin.signed_by = created.image->signature->key_fingerprint;
    }
    pin.pinned = oci::parse_reference(created.image->reference)
                     .value_or_throw()
                     .pinned(created.image->digest)
                     .str();
    source_pin = pin;
  }
  const std::string lock_path = recipe::lock_path_for(recipe_path);
  const recipe::LockFile lock = lock_after_bake(read_lock(lock_path),
                                                recipe_path,
                                                m_create.recipe().sha256,
                                                source_pin,
                                                baked,
                                                provenance::rfc3339_now());

  // Host state first: a crash between the two writes leaves the lock untouched, and a re-run
  // pushes again anyway (Lume's upload-time makes every push a new digest).
  const std::string record_path =
      std::filesystem::path(
          provenance::provenance_path(m_options.create.state_dir, m_options.create.vm)
              .value_or_throw())
          .replace_filename("bake.json")
          .string();
  nlohmann::json host = recipe::to_json(baked);
  host["vm"] = m_options.create.vm;
  host["recipe_path"] = recipe_path;
  util::write_file_atomic(record_path, host.dump(2) + "\n").value_or_throw();
  recipe::write_lock_file(lock_path, lock).value_or_throw();

  m_outcome.baked = baked;
  m_outcome.lock_path = lock_path;
  m_outcome.host_record_path = record_path;
  return {true, "recorded in " + lock_path + " and " + record_path};
}

} // namespace lume_unlock::pipeline

#pragma once

#include "pipeline/create.hpp"
#include "pipeline/plan.hpp"
#include "recipe/recipe.hpp"
#include "signing/signing.hpp"
#include "transfer/image_push.hpp"
#include "util/ecdsa_key.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace lume_unlock::pipeline {

/// What `lume-unlock bake RECIPE --push REF` was asked for.
struct BakeOptions {
  CreateOptions create;  ///< the VM to build; a recipe is required
  oci::Reference target; ///< registry/org/name:tag
  std::optional<std::uint32_t> chunk_size_mb;
  std::chrono::milliseconds push_timeout{std::chrono::hours(3)};
  std::chrono::milliseconds stop_timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds push_poll_interval{std::chrono::seconds(2)};
  /// --sign-key, read before anything runs: the pushed digest is signed in cosign's layout
  /// (step "sign") and the key recorded with the bake.
  std::optional<util::EcdsaPrivateKey> sign_key;
  std::string version; ///< lume-unlock's version, for the signature's provenance summary
};

struct BakeOutcome {
  std::optional<transfer::PushedImage> pushed;
  std::optional<recipe::BakedImage> baked;       ///< as recorded
  std::optional<signing::SignOutcome> signature; ///< with a sign key
  std::string lock_path;                         ///< the recipe's lock file, updated
  std::string host_record_path;                  ///< <state>/vms/<vm>/bake.json
};

/// `bake` as an explicit plan: every step of `create` (which write the provenance record, and
/// with create.bench the bench figures, into the guest, so they travel inside the image), then
/// stop → push (through Lume, then resolved, checked against the VM's disk and tagged
/// sha256-<hex>) → annotate (with create.bench: the figures as manifest annotations, the
/// immutable tag set on the annotated digest instead) → sign → record (the recipe's lock file
/// and the host state, with the final digest). A failed push records nothing; a failed bench
/// gate pushes nothing.
class BakePipeline {
public:
  BakePipeline(BakeOptions options, CreateServices services);

  /// The create preflight (Throws Error) plus the bake steps; nothing is changed.
  Plan plan();

  const CreatePipeline& create() const { return m_create; }
  const BakeOutcome& outcome() const { return m_outcome; }

private:
  StepResult step_push();
  StepResult step_annotate();
  StepResult step_sign();
  StepResult step_record();

  BakeOptions m_options;
  CreateServices m_services;
  CreatePipeline m_create;
  BakeOutcome m_outcome;
};

/// The lock file after a bake: `existing` (when it was made from the same recipe bytes) keeps its
/// references; otherwise the references are rebuilt from `source_pin` (the image the bake
/// started from, when it came from the recipe). Earlier bakes are kept; `baked` is appended.
recipe::LockFile lock_after_bake(const std::optional<recipe::LockFile>& existing,
                                 const std::string& recipe_path,
                                 const std::string& recipe_sha256,
                                 const std::optional<recipe::LockedReference>& source_pin,
                                 const recipe::BakedImage& baked,
                                 const std::string& now);

} // namespace lume_unlock::pipeline

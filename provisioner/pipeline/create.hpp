#pragma once

#include "apply/artifact_installer.hpp"
#include "apply/artifact_stage.hpp"
#include "apply/guest_access.hpp"
#include "apply/probe.hpp"
#include "apply/programs.hpp"
#include "apply/shim_installer.hpp"
#include "bundle/bundle.hpp"
#include "fetch/fetch.hpp"
#include "guest/guest_records.hpp"
#include "guest/session.hpp"
#include "lume/client.hpp"
#include "lume/types.hpp"
#include "oci/registry_client.hpp"
#include "pipeline/bench.hpp"
#include "pipeline/golden.hpp"
#include "pipeline/plan.hpp"
#include "provenance/provenance.hpp"
#include "recipe/recipe.hpp"
#include "signing/signing.hpp"
#include "transfer/image_pull.hpp"
#include "util/http_client.hpp"
#include "util/progress.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

/// What `lume-unlock create` was asked for.
struct CreateOptions {
  lume::VmName vm{"vm"}; ///< a placeholder until the caller sets the parsed name
  /// Loaded once by the caller; required unless `from` is given. Its sha256 is matched against
  /// the recipe's lock file.
  std::optional<recipe::Recipe> recipe;
  std::optional<std::string> recipe_path; ///< as given, for the record: `recipe->path`
  std::optional<std::string> from;        ///< image reference overriding the recipe's
  /// `clone` (create --from VM): the golden VM copied through Lume instead of pulling an image;
  /// the recipe must be the one it was made from.
  std::optional<lume::VmName> clone_source;
  std::optional<std::uint32_t> cpu; ///< overrides the recipe's vm.cpu
  std::optional<std::uint64_t> memory_bytes;
  std::string lume_url;  ///< recorded in the provenance
  std::string state_dir; ///< host records (provenance) live in <state_dir>/vms/<vm>/
  /// Entries added with `allow` (origin "allow" in the host record) are kept unless the recipe
  /// names them; with `exclusive` they are removed (the plan lists them either way).
  bool exclusive = false;
  std::string bundle_source; ///< where the bundle came from, for the record and the summary
  /// The registry artifact the bundle was fetched from (pinned by digest), for the record.
  std::optional<oci::Reference> bundle_artifact;
  /// The recipe's trust: keys: the image step refuses (exit 6) a digest none of them signed,
  /// before Lume pulls anything.
  std::vector<signing::TrustedKey> trusted_keys;
  /// The key that vouched for `bundle_artifact` (checked before it was fetched), for the record.
  std::optional<std::string> bundle_signed_by;
  /// Extra environment for the unlocked probe run only: a test hook (LUME_UNLOCK_DISABLE=1).
  std::map<std::string, std::string> probe_extra_env;
  std::chrono::milliseconds boot_timeout{std::chrono::minutes(10)};
  /// An IPSW source: the whole download + install + unattended setup, and how long "stopped"
  /// must hold before the unattended setup counts as finished (ipsw_install.hpp).
  std::chrono::milliseconds install_timeout{std::chrono::hours(3)};
  std::chrono::milliseconds install_settle{std::chrono::seconds(90)};
  /// How long a refused or dropped SSH login is retried after Lume reports SSH open.
  std::chrono::milliseconds ssh_wait{std::chrono::seconds(60)};
  /// `--bench`: the recipe's bench, run as the last step. A gate that fails stops the create
  /// (exit 6) with the VM left in place and the figures recorded.
  std::optional<BenchOptions> bench;
  /// Install items with `share: true`: false, each dest is a link into the artifact cache, shared
  /// read-only with the VM; true (bake: an image must be complete), they are copied.
  bool copy_shared = false;
  /// Where the guest mounts Lume's shared directories (LUME_UNLOCK_GUEST_SHARE_ROOT).
  std::string guest_share_root = lume::k_macos_share_root;
};

/// The collaborators a create runs with (all outlive the pipeline).
struct CreateServices {
  lume::LumeApi& lume;
  oci::RegistryClient& registry;
  const bundle::LoadedBundle& bundle;
  apply::GuestConnector connect;
  util::ProgressCallback progress;
  std::function<void(const std::string&)> warn; ///< warnings for the user (host preference…)
  /// The artifact cache and the HTTPS client that fills it: required with an install: block.
  fetch::BlobCache* cache = nullptr;
  util::HttpClient* artifact_http = nullptr;
  fetch::MirrorMap mirrors;       ///< where the artifacts' https sources are really fetched from
  std::string hugging_face_token; ///< HF_TOKEN, for Hugging Face sources only
};

/// What a create found and did, for the summary and --json.
struct CreateOutcome {
  std::string reference; ///< the image reference used (the lock's pinned one when locked)
  bool locked = false;   ///< the reference came from <recipe>.lock.json
  std::optional<transfer::PulledImage> image;
  /// A clone: its source, and the image it holds (as the source's record names it).
  std::optional<provenance::ClonedFrom> cloned_from;
  std::optional<provenance::ImageInfo> inherited_image;
  std::optional<apply::ShimInstallReport> shim;
  std::optional<apply::ProbeRun> probe;
  std::optional<apply::ProbeVerdict> verdict;
  std::vector<std::string> enablement_changes;
  std::vector<std::string> kept_allow_entries; ///< names kept (not exclusive) or removed
  std::vector<std::string> removed_allow_entries;
  std::vector<apply::ProgramCheck> program_checks; ///< the verdicts of the programs enabled
  std::vector<std::string> warnings;
  std::optional<provenance::Provenance> record;
  std::optional<BenchOutcome> bench;          ///< with --bench, once the bench step ran
  std::vector<apply::StagedArtifact> fetched; ///< the recipe's install: items, fetched
  std::optional<apply::ArtifactInstallReport> artifacts;
};

/// `create` as an explicit plan (DESIGN §8): preflight (read-only, at planning time) → fetch
/// (the recipe's install: items onto the host, verified; only with such items) → image →
/// resize → boot → connect → facts → install-shim → probe → install (the fetched artifacts into
/// the guest) → enablement → provenance (→ bench, with options.bench). Every step but bench is
/// idempotent, so a second create reports them unchanged; bench measures again each time. With
/// options.clone_source the image step is `clone` (the golden VM copied through Lume) and a
/// `keys` step after connect revokes the source's per-VM key in the copy.
class CreatePipeline {
public:
  CreatePipeline(CreateOptions options, CreateServices services)
      : m_options(std::move(options)), m_services(std::move(services)) {}

  /// Runs the preflight (the options' recipe and its lock, name, Lume reachable, VM absent or ours,
  /// running-VM limit, host preference) and builds the plan. Sends no POST/PATCH and opens no SSH
  /// session, so --dry-run can print it. Throws Error (the preflight's category).
  Plan plan();

  const CreateOutcome& outcome() const { return m_outcome; }
  const recipe::Recipe& recipe() const { return m_recipe; }
  /// The session opened by the connect step (null before it ran).
  guest::GuestSession* session() const { return m_session.get(); }

private:
  /// What the preflight observed of Lume and the VM, for the steps' descriptions.
  struct Observed {
    lume::HostStatus host;
    std::optional<lume::VmState> found; ///< absent: no VM of that name (or Lume masks it)
    std::string vm;                     ///< "absent", or Lume's state, "ours", the same image
  };

  // The read-only preflight (create.cpp).
  void read_recipe_and_lock();
  bool choose_reference(); ///< true when the VM comes from an IPSW, not an image
  Observed observe_lume(bool from_ipsw);
  bool read_allow_entries();
  std::string check_same_image(bool from_ipsw);

  // Each step: its part of the plan and, in its apply, the work (create.cpp: the VM through
  // Lume; create_steps.cpp: the guest, the artifacts and the records).
  Step preflight_step(const Observed& observed) const;
  Step fetch_step();
  Step image_step(const Observed& observed);
  Step install_ipsw_step(const Observed& observed);
  Step clone_step(const Observed& observed);
  Step revoke_source_key_step();
  void check_clone_target(const Observed& observed, bool ours);
  Step resize_step();
  Step boot_step();
  Step connect_step();
  Step facts_step();
  Step install_shim_step();
  Step probe_step();
  Step install_artifacts_step();
  Step enablement_step();
  Step provenance_step();
  Step bench_step();
  lume::VmDetails current_details();
  const enablement::Profile& profile() const { return m_recipe.shim.profile; }
  std::uint32_t desired_cpu() const;
  std::uint64_t desired_memory() const;

  CreateOptions m_options;
  CreateServices m_services;
  recipe::Recipe m_recipe;
  std::optional<recipe::LockFile> m_lock; ///< when made from the recipe's bytes
  /// The recipe's shim.dylib, its digest checked by the preflight (installed instead of the
  /// bundle's shim).
  std::optional<recipe::VerifiedExternalShim> m_external_shim;
  std::optional<apply::StagingArea> m_staging;
  oci::Reference m_reference;
  std::optional<GoldenSource> m_golden; ///< a clone's source, checked by the preflight
  std::optional<lume::VmDetails> m_observed_vm;
  std::unique_ptr<guest::GuestSession> m_session;
  std::optional<guest::GuestFacts> m_facts;
  std::vector<provenance::EnablementRecord> m_enablement_records;
  /// Entries the host record says were added with `allow` and the recipe does not name.
  std::vector<std::string> m_allow_entries;
  CreateOutcome m_outcome;
};

/// The provenance of DESIGN §7 from what a create established (absent fields stay absent).
/// `previous` keeps its created_at; updated_at is `now`.
provenance::Provenance build_provenance(const CreateOptions& options,
                                        const recipe::Recipe& recipe,
                                        const CreateOutcome& outcome,
                                        const lume::VmDetails& vm,
                                        const guest::GuestFacts& facts,
                                        const std::vector<provenance::EnablementRecord>& enablement,
                                        const std::optional<provenance::Provenance>& previous,
                                        const std::string& now);

} // namespace lume_unlock::pipeline

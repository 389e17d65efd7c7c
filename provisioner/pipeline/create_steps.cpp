// CreatePipeline (pipeline/create.hpp), part two: the steps past the VM: the recipe's install:
// items (fetched onto the host before the image, put into the guest after the probe), the guest
// over SSH (log in, facts, shim, probe, enablement list) and what a create leaves behind (the
// provenance record in the guest and on the host; with --bench, the figures).

#include "apply/enablement_apply.hpp"
#include "guest/guest_layout.hpp"
#include "pipeline/create.hpp"
#include "pipeline/vm_state.hpp"
#include "provenance/provenance.hpp"
#include "util/size.hpp"
#include "util/text.hpp"

namespace lume_unlock::pipeline {

namespace {

/// "'a', 'b'".
std::string quoted_list(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) {
    text += (text.empty() ? "'" : ", '") + name + "'";
  }
  return text;
}

/// The fetch step's words, one line per install item: its source, where it goes, and whether
/// the cache holds its pinned digest, it will be downloaded and checked against it, or it is
/// unpinned. `all_cached` says whether the cache holds every item.
std::string describe_fetch(const recipe::Recipe& recipe,
                           const recipe::LockFile* lock,
                           const fetch::BlobCache& cache,
                           bool& all_cached) {
  const auto short_hex = [](const std::string& hex) { return "sha256:" + hex.substr(0, 12) + "…"; };
  std::string text =
      "fetch " + util::plural(recipe.install.size(), "artifact") + " onto the host, verified:";
  all_cached = true;
  for (const auto& item : recipe.install) {
    const apply::ArtifactPin pin = apply::pin_of(item, lock);
    const bool cached = pin.sha256 && cache.find(*pin.sha256);
    all_cached = all_cached && cached;
    const std::string state =
        !pin.sha256 ? "download, unpinned: 'lume-unlock lock' pins it"
        : cached    ? "in the cache, " + short_hex(*pin.sha256)
                 : "download, pinned " + short_hex(*pin.sha256) + (pin.from_lock ? " (lock)" : "");
    text += "\n    " + item.field + " " + fetch::describe(recipe::install_source(recipe, item)) +
            " -> " + item.dest + " (" + fetch::format_name(item.unpack) + "; " + state + ")";
  }
  return text;
}

/// "2 artifacts, 1.2 GiB: 1 from the cache, 1.1 GiB downloaded".
std::string summarize_fetch(const std::vector<apply::StagedArtifact>& staged) {
  std::uint64_t total = 0;
  std::uint64_t downloaded = 0;
  std::size_t cached = 0;
  for (const auto& artifact : staged) {
    total += artifact.fetched.size;
    downloaded += artifact.fetched.network_bytes;
    cached += artifact.fetched.from_cache ? 1 : 0;
  }
  return util::plural(staged.size(), "artifact") + ", " + util::format_size(total) + ": " +
         std::to_string(cached) + " from the cache, " + util::format_size(downloaded) +
         " downloaded";
}

/// "families 1006-1009 now true": the first and last changed family codes.
std::string describe_changes(const apply::ProbeVerdict& verdict) {
  const auto& families = verdict.changed_families;
  if (families.empty()) {
    return "no family answer changed";
  }
  return "families " + families.front() + (families.size() > 1 ? "-" + families.back() : "") +
         " now true";
}

provenance::GuestInfo guest_info(const guest::GuestFacts& facts) {
  provenance::GuestInfo guest;
  if (facts.product_version) {
    guest.os = "macOS";
    guest.version = facts.product_version;
    guest.build = facts.build_version;
  } else if (!facts.kernel.empty()) {
    guest.os = facts.kernel;
  }
  if (!facts.machine.empty()) {
    guest.arch = facts.machine;
  }
  return guest;
}

/// The installed shim: its bundle (and the artifact it came from), platform, profile and the
/// hash of every file put into the guest.
provenance::ShimInfo shim_info(const CreateOptions& options,
                               const recipe::Recipe& recipe,
                               const apply::InstalledShim& installed) {
  provenance::ShimInfo shim;
  shim.bundle_version = installed.bundle_version;
  if (options.bundle_artifact && options.bundle_artifact->digest) {
    shim.bundle_reference = options.bundle_artifact->str();
    shim.bundle_digest = options.bundle_artifact->digest->str();
    shim.bundle_signed_by = options.bundle_signed_by;
  }
  shim.platform = installed.platform;
  shim.profile = provenance::ShimProfile{
      static_cast<std::int64_t>(recipe.shim.profile.apple_family_max),
      static_cast<std::int64_t>(recipe.shim.profile.max_threadgroup_memory)};
  std::vector<provenance::FileHash> files = {{installed.shim.path, installed.shim.sha256}};
  for (const auto& file : installed.support) {
    files.push_back({file.path, file.sha256});
  }
  if (installed.probe) {
    files.push_back({installed.probe->path, installed.probe->sha256});
  }
  shim.files = files;
  if (installed.external && recipe.shim.external) {
    shim.external = provenance::FileHash{recipe.shim.external->dylib, installed.shim.sha256};
  }
  return shim;
}

} // namespace

Step CreatePipeline::fetch_step() {
  if (m_services.cache == nullptr || m_services.artifact_http == nullptr) {
    throw Error(ErrorCategory::failure,
                "create '" + m_options.vm.str() + "'",
                "the recipe has an install: block but no artifact cache was set up");
  }
  const recipe::LockFile* lock = m_lock ? &*m_lock : nullptr;
  for (const auto& item : m_recipe.install) {
    if (!apply::pin_of(item, lock).sha256) {
      m_outcome.warnings.push_back(
          item.field + " (" + fetch::describe(recipe::install_source(m_recipe, item)) +
          ") has no sha256 in the recipe or its lock: whatever it serves is installed; pin it "
          "with 'lume-unlock lock " +
          m_recipe.path + "'");
    }
  }
  bool all_cached = false;
  std::string description = describe_fetch(m_recipe, lock, *m_services.cache, all_cached);
  return Step::observed_as(
      "fetch",
      std::move(description),
      std::nullopt,
      all_cached ? "all in the cache" : "some to download",
      [this, lock]() -> StepResult {
        m_staging.emplace(apply::StagingArea::create(*m_services.cache).value_or_throw());
        fetch::FetchServices services{*m_services.artifact_http,
                                      &m_services.registry,
                                      m_services.progress,
                                      m_services.mirrors,
                                      m_services.hugging_face_token};
        m_outcome.fetched =
            apply::stage_artifacts(m_recipe, lock, *m_services.cache, services, *m_staging)
                .value_or_throw();
        // Before the image: a program the archives do not hold fails now, not after a long pull.
        apply::check_enabled_programs(m_outcome.fetched, m_recipe.enablement).value_or_throw();
        // Changed: something came from the network (a host file is read in place, not fetched).
        bool downloaded = false;
        for (const auto& artifact : m_outcome.fetched) {
          downloaded = downloaded || artifact.fetched.network_bytes != 0 ||
                       (!artifact.fetched.from_cache &&
                        artifact.item.source.kind != fetch::ArtifactSource::Kind::file);
        }
        return {downloaded, summarize_fetch(m_outcome.fetched)};
      });
}

Step CreatePipeline::install_artifacts_step() {
  std::string list;
  for (const auto& item : m_recipe.install) {
    list += (list.empty() ? "" : ", ") + item.dest;
  }
  return Step::unobserved(
      "install",
      "put the fetched artifacts into the guest (" + list +
          "): files that differ streamed over SFTP, checked by SHA-256, moved into place all or "
          "none",
      [this]() -> StepResult {
        // The support folder's staging root: on the home's volume, as the destinations are.
        const std::string scratch = guest::support_dir_of_home(m_facts->home) + "/staging";
        const bool any_shared = apply::any_shared(m_outcome.fetched);
        std::optional<apply::GuestCacheShare> share;
        if (any_shared && !m_options.copy_shared) {
          share.emplace(apply::GuestCacheShare{*m_services.cache, m_options.guest_share_root});
        }
        const apply::ArtifactInstallReport report =
            apply::install_artifacts(*m_session,
                                     m_outcome.fetched,
                                     m_outcome.shim->installed,
                                     scratch,
                                     m_services.progress,
                                     share ? &*share : nullptr)
                .value_or_throw();
        std::string summary = report.files_sent == 0
                                  ? std::to_string(report.files_total) + " files in place"
                                  : "sent " + std::to_string(report.files_sent) + " of " +
                                        std::to_string(report.files_total) + " files (" +
                                        util::format_size(report.bytes_sent) +
                                        "), checked by SHA-256 in the guest";
        if (share) {
          summary += "; " + util::plural(report.shared_items, "shared item") +
                     " linked to the read-only shared cache" +
                     (report.links_made != 0 ? " (0 bytes sent)" : ", in place");
        } else if (any_shared) {
          summary += "; share: true items copied into the VM (an image must be complete)";
        }
        m_outcome.artifacts = report;
        m_staging.reset(); // the unpacked trees are in the guest now
        return {report.changed(), summary};
      });
}

Step CreatePipeline::connect_step() {
  return Step::unobserved(
      "connect", "SSH login (password first, then the per-VM key)", [this]() -> StepResult {
        m_session = apply::connect_when_ready(m_services.connect, m_options.ssh_wait);
        return {false, "connected"};
      });
}

Step CreatePipeline::revoke_source_key_step() {
  const std::string& source = m_golden->vm;
  return Step::unobserved(
      "keys",
      "revoke '" + source + "''s per-VM key in the clone (the login above installed its own); " +
          "the SSH host key stays " + source + "'s (" + m_golden->fingerprint +
          "): the disk is a copy, and changing it needs root in the guest",
      [this]() -> StepResult {
        const std::string& source = m_golden->vm;
        const bool revoked =
            revoke_authorized_key(*m_session, m_golden->public_key).value_or_throw();
        return {revoked,
                revoked ? "revoked '" + source + "''s key"
                        : "'" + source + "''s key is not in ~/.ssh/authorized_keys"};
      });
}

Step CreatePipeline::facts_step() {
  return Step::unobserved(
      "facts", "read the guest's OS, architecture, uid and home", [this]() -> StepResult {
        m_facts = guest::gather_guest_facts(*m_session).value_or_throw();
        const std::string os =
            m_facts->product_version ? "macOS " + *m_facts->product_version : m_facts->kernel;
        return {false, os + " " + m_facts->machine + ", home " + m_facts->home};
      });
}

Step CreatePipeline::install_shim_step() {
  const std::string external = m_external_shim
                                   ? "the external shim " + m_external_shim->path + " (sha256 " +
                                         m_external_shim->sha256.substr(0, 12) + "…, checked) with "
                                   : std::string();
  return Step::unobserved(
      "install-shim",
      "install " + external + "the bundle " + m_services.bundle.manifest().version +
          " entry for the guest (" + m_options.bundle_source + ")",
      [this]() -> StepResult {
        m_outcome.shim =
            apply::install_shim(*m_session, m_services.bundle, *m_facts, m_external_shim)
                .value_or_throw();
        const apply::InstalledShim& installed = m_outcome.shim->installed;
        const std::size_t files = 1 + installed.support.size() + (installed.probe ? 1 : 0);
        return {m_outcome.shim->changed,
                std::string(m_outcome.shim->changed ? "installed " : "in place: ") +
                    std::to_string(files) + " files for " + m_outcome.shim->platform};
      });
}

Step CreatePipeline::probe_step() {
  return Step::unobserved(
      "probe",
      "probe stock and with the shim (Apple ceiling " + std::to_string(profile().apple_family_max) +
          ", threadgroup memory " + std::to_string(profile().max_threadgroup_memory) + ")",
      [this]() -> StepResult {
        const apply::InstalledShim& shim = m_outcome.shim->installed;
        m_outcome.probe = apply::run_probes(*m_session, shim, profile(), m_options.probe_extra_env)
                              .value_or_throw();
        m_outcome.verdict = apply::judge_probe(
            m_outcome.probe->stock, m_outcome.probe->unlocked, profile(), !shim.external);
        apply::require_probe_pass(*m_outcome.verdict, m_options.vm).value_or_throw();
        return {false,
                describe_changes(*m_outcome.verdict) + ", threadgroup memory " +
                    std::to_string(m_outcome.verdict->stock_threadgroup_memory) + " -> " +
                    std::to_string(m_outcome.verdict->unlocked_threadgroup_memory)};
      });
}

Step CreatePipeline::enablement_step() {
  const std::string allow_names = quoted_list(m_allow_entries);
  const std::string allow_part =
      m_allow_entries.empty() ? ""
      : m_options.exclusive   ? "; --exclusive: remove the entries added with allow: " + allow_names
                              : "; keep the entries added with allow: " + allow_names;
  const std::size_t n = m_recipe.enablement.entries.size();
  return Step::unobserved(
      "enablement",
      "apply " + util::plural(n, "enablement entry", "enablement entries") + " of the recipe" +
          allow_part,
      [this]() -> StepResult {
        const apply::GuestEnablement observed =
            apply::observe_enablement(*m_session, *m_facts).value_or_throw();
        apply::EnablementTarget target =
            apply::enablement_target(observed, *m_facts, m_options.vm).value_or_throw();
        target.settings.default_profile = profile();
        // Entries added with `allow` stay (as the guest has them) unless --exclusive.
        enablement::EnablementList desired = m_recipe.enablement;
        std::map<std::string, std::string> origins;
        const auto applied = apply::applied_list(observed);
        for (const std::string& name : m_allow_entries) {
          const auto* entry = applied.ok() ? applied.value().find(name) : nullptr;
          if (m_options.exclusive || entry == nullptr) {
            m_outcome.removed_allow_entries.push_back(name);
            continue;
          }
          desired.entries.push_back(*entry);
          origins[name] = provenance::k_origin_allow;
          m_outcome.kept_allow_entries.push_back(name);
        }
        const apply::ApplyReport report =
            apply::apply_enablement(*m_session, desired, target, observed).value_or_throw();
        m_outcome.enablement_changes = report.changes;
        m_outcome.program_checks = report.checks;
        m_enablement_records =
            enablement_records(report.applied, target.layout, target.settings, origins)
                .value_or_throw();
        const auto named = [](const std::string& verb, const std::vector<std::string>& names) {
          return names.empty()
                     ? std::string()
                     : "; " + verb + " the entries added with allow: " + quoted_list(names);
        };
        return {report.changed,
                (report.changed
                     ? std::to_string(report.changes.size()) + " change(s)"
                     : util::plural(desired.entries.size(), "entry", "entries") + " in place") +
                    named("kept", m_outcome.kept_allow_entries) +
                    named("removed", m_outcome.removed_allow_entries)};
      });
}

Step CreatePipeline::provenance_step() {
  return Step::unobserved(
      "provenance", "write the provenance record (guest, then host)", [this]() -> StepResult {
        const lume::VmDetails vm = current_details();
        const std::string guest_path = guest_record_path(m_facts->home);
        const auto guest = read_guest_record(*m_session, m_facts->home);
        std::optional<provenance::Provenance> previous;
        // A clone's disk holds its source's record: not this VM's history.
        if (guest.ok() && !(m_golden && guest.value().vm != m_options.vm.str())) {
          previous = guest.value();
        }
        std::optional<provenance::Provenance> host_previous;
        if (auto host = provenance::read_provenance(m_options.state_dir, m_options.vm); host.ok()) {
          host_previous = host.value();
        }
        provenance::Provenance record = build_provenance(m_options,
                                                         m_recipe,
                                                         m_outcome,
                                                         vm,
                                                         *m_facts,
                                                         m_enablement_records,
                                                         previous ? previous : host_previous,
                                                         provenance::rfc3339_now());
        if (previous && host_previous && provenance::same_provenance(record, *previous) &&
            provenance::same_provenance(record, *host_previous)) {
          m_outcome.record = *host_previous;
          return {false, "guest and host records up to date"};
        }
        write_vm_record(*m_session, m_facts->home, m_options.state_dir, record).value_or_throw();
        m_outcome.record = record;
        return {true,
                "wrote " + guest_path + " and " +
                    provenance::provenance_path(m_options.state_dir, m_options.vm).value()};
      });
}

Step CreatePipeline::bench_step() {
  return Step::unobserved(
      "bench",
      "measure with llama-bench stock and unlocked: " + describe_bench(*m_options.bench) +
          "; record the figures (guest, then host)",
      [this]() -> StepResult {
        BenchOptions options = *m_options.bench;
        options.vm = m_options.vm;
        options.state_dir = m_options.state_dir;
        m_outcome.bench = run_bench(*m_session, options, m_services.progress).value_or_throw();
        if (m_outcome.bench->failures.empty()) {
          return {true, bench_summary(m_outcome.bench->record)};
        }
        std::string why = "the gate failed:";
        for (const std::string& failure : m_outcome.bench->failures) {
          why += "\n  " + failure;
        }
        const std::string vm = m_options.vm;
        throw Error(ErrorCategory::verification,
                    "bench of VM '" + vm + "'",
                    why,
                    "the VM '" + vm +
                        "' was created and left in place, and the figures are in its record "
                        "('lume-unlock status " +
                        vm + "'); fix the cause and measure again with 'lume-unlock bench " + vm +
                        " --model " + options.request.model + "'");
      });
}

provenance::Provenance build_provenance(const CreateOptions& options,
                                        const recipe::Recipe& recipe,
                                        const CreateOutcome& outcome,
                                        const lume::VmDetails& vm,
                                        const guest::GuestFacts& facts,
                                        const std::vector<provenance::EnablementRecord>& enablement,
                                        const std::optional<provenance::Provenance>& previous,
                                        const std::string& now) {
  provenance::Provenance record;
  record.vm = options.vm;
  if (!options.lume_url.empty()) {
    record.lume_url = options.lume_url;
  }
  if (outcome.image) {
    record.image = image_info(*outcome.image);
  } else if (outcome.inherited_image) {
    record.image = outcome.inherited_image;
  }
  record.cloned_from = outcome.cloned_from;
  if (!record.cloned_from && previous) {
    record.cloned_from = previous->cloned_from; // a create over a clone keeps where it came from
  }
  record.hardware = hardware_of(vm);
  record.guest = guest_info(facts);
  if (outcome.shim) {
    record.shim = shim_info(options, recipe, outcome.shim->installed);
  }
  record.enablement = enablement;
  if (outcome.artifacts) {
    record.artifacts = outcome.artifacts->records;
  }
  if (outcome.probe) {
    record.probe = provenance::ProbeInfo{outcome.probe->stock, outcome.probe->unlocked};
  }
  if (options.recipe_path) {
    record.recipe = provenance::RecipeInfo{*options.recipe_path, recipe.sha256};
  }
  // The last bench stays until a new one replaces it: a re-create that changes nothing must
  // not drop the figures `status` shows (and a baked image carries them).
  if (previous) {
    record.bench = previous->bench;
  }
  record.created_at = previous && previous->created_at ? previous->created_at : now;
  record.updated_at = now;
  return record;
}

} // namespace lume_unlock::pipeline

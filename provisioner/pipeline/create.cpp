#include "pipeline/create.hpp"

#include "apply/enablement_apply.hpp"
#include "enablement/launch_agent.hpp"
#include "guest/shell_quote.hpp"
#include "lume/host_preference.hpp"
#include "lume/ipsw_install.hpp"
#include "lume/masked_vm.hpp"
#include "lume/vm_name.hpp"
#include "lume/vm_power.hpp"
#include "lume/vm_storage.hpp"
#include "lume/wait.hpp"
#include "pipeline/artifact_plan.hpp"
#include "pipeline/vm_record.hpp"
#include "provenance/record_merge.hpp"
#include "recipe/lock_file.hpp"
#include "util/atomic_file.hpp"
#include "util/size.hpp"

#include <sys/stat.h>

namespace lume_unlock::pipeline {

namespace {

bool file_exists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

const lume::VmDetails* details_of(const lume::VmState& state) {
  return std::get_if<lume::VmDetails>(&state);
}

std::string short_digest(const std::string& digest) {
  return digest.size() > 19 ? digest.substr(0, 19) + "…" : digest;
}

/// "1006-1009" style ranges of the changed family codes.
std::string describe_changes(const apply::ProbeVerdict& verdict) {
  if (verdict.changed_families.empty()) {
    return "no family answer changed";
  }
  std::string text = "families " + verdict.changed_families.front();
  if (verdict.changed_families.size() > 1) {
    text += "-" + verdict.changed_families.back();
  }
  return text + " now true";
}

} // namespace

CreatePipeline::CreatePipeline(CreateOptions options, CreateServices services)
    : m_options(std::move(options)), m_services(std::move(services)) {}

CreatePipeline::~CreatePipeline() = default;

std::uint32_t CreatePipeline::desired_cpu() const {
  return m_options.cpu.value_or(static_cast<std::uint32_t>(m_recipe.vm.cpu));
}

std::uint64_t CreatePipeline::desired_memory() const {
  return m_options.memory_bytes.value_or(m_recipe.vm.memory_bytes);
}

Plan CreatePipeline::plan() {
  const std::string& vm = m_options.vm; // a lume::VmName: checked where it was parsed

  // Recipe and lock.
  if (m_options.recipe) {
    m_recipe = *m_options.recipe;
  } else if (!m_options.from) {
    throw Error(ErrorCategory::usage,
                "create '" + vm + "'",
                "no recipe and no image given",
                "give --recipe FILE (e.g. image-recipes/tahoe-llm.yaml) or --from REF");
  }
  if (m_options.recipe) {
    const std::string lock_path = recipe::lock_path_for(m_recipe.path);
    if (file_exists(lock_path)) {
      recipe::LockFile lock = recipe::load_lock_file(lock_path).value_or_throw();
      // The recipe's sha256 is of the bytes it was loaded from: no need to read them again.
      if (lock.recipe_sha256 == m_recipe.sha256) {
        m_lock = std::move(lock);
      } else {
        m_outcome.warnings.push_back("'" + lock_path +
                                     "' was made from other recipe bytes; using the recipe's "
                                     "references and digests (refresh the lock with "
                                     "'lume-unlock lock " +
                                     m_recipe.path + "')");
      }
    }
  }
  std::string reference_text;
  if (m_options.from) {
    reference_text = *m_options.from;
  } else if (m_recipe.source.image) {
    reference_text = *m_recipe.source.image;
    if (m_lock) {
      const recipe::LockFile& lock = *m_lock;
      if (const auto* pinned = lock.find("source.image")) {
        // The recipe's tag stays beside the pinned digest: Lume pulls by tag, and an upstream
        // image has no sha256-<hex> tag, so the pull goes through the tag while it still names
        // the digest (transfer/image_pull.cpp; .manifest-digest is compared afterwards).
        const auto written = oci::parse_reference(pinned->reference);
        reference_text = written.ok() && written.value().tag && !written.value().digest
                             ? pinned->reference + "@" + pinned->digest
                             : pinned->pinned;
        m_outcome.locked = true;
      }
    }
  } else if (!m_recipe.source.unattended) {
    throw Error(ErrorCategory::usage,
                "create '" + vm + "'",
                "the recipe installs from an IPSW without 'source.unattended', so the guest would "
                "have no SSH account",
                "add 'unattended: tahoe' under 'source' (Lume then creates the user lume/lume "
                "with Remote Login on)");
  }
  if (!reference_text.empty()) {
    m_reference = oci::parse_reference(reference_text).value_or_throw();
    m_outcome.reference = m_reference.str();
  } else {
    m_outcome.reference = "ipsw:" + *m_recipe.source.ipsw;
  }
  const bool from_ipsw = reference_text.empty();

  // Lume: reachable, VM absent or ours, running-VM limit.
  const lume::HostStatus host = m_services.lume.host_status().value_or_throw();
  auto lookup = m_services.lume.find(lume::VmRef{vm});
  std::optional<lume::VmState> found;
  if (!lookup.ok() && lume::is_sticky_pull_failure(lookup.error())) {
    // Lume masks the name behind an earlier failed pull until a new pull under it starts
    // (lume-api.md §3.3). With no VM there, the image step's pull clears it; over an existing
    // VM such a pull fails (and sticks) again, so only a restart of Lume clears it.
    // The VM cannot be looked up by name now, so look where a new VM of that name would go.
    const auto location = lume::default_location_path(m_services.lume);
    const std::string vm_dir = location.ok() ? location.value() + "/" + vm : std::string();
    if (!location.ok() || file_exists(vm_dir + "/config.json")) {
      throw lookup.error().with_hint("Lume keeps this answer for '" + vm +
                                     "' until its server restarts" +
                                     (vm_dir.empty() ? std::string() : "; the VM is in " + vm_dir) +
                                     ": restart Lume ('lume serve') and run create again");
    }
  } else {
    found = std::move(lookup).value_or_throw();
  }
  const std::string record_path =
      provenance::provenance_path(m_options.state_dir, vm).value_or_throw();
  const bool ours = file_exists(record_path);
  if (ours) {
    if (auto host_record = provenance::read_provenance(m_options.state_dir, vm); host_record.ok()) {
      for (const auto& [name, origin] : enablement_origins(host_record.value())) {
        if (origin == provenance::k_origin_allow && m_recipe.enablement.find(name) == nullptr) {
          m_allow_entries.push_back(name);
        }
      }
    }
  }
  std::string vm_observed = "absent";
  if (found) {
    if (const auto* details = details_of(*found)) {
      m_observed_vm = *details;
    }
    vm_observed = lume::describe(*found) + (ours ? ", ours" : "");
    if (!ours && from_ipsw) {
      throw Error(ErrorCategory::usage,
                  "create '" + vm + "'",
                  "a VM of that name exists and was not created by lume-unlock",
                  "choose another name, or delete it first with 'lume delete " + vm + "'");
    }
    if (!ours) {
      const auto fetched = m_services.registry.get_manifest(m_reference).value_or_throw();
      const auto lume_digest =
          lume::read_manifest_digest(lume::vm_directory(m_services.lume, vm).value_or_throw());
      if (!lume_digest.ok() || lume_digest.value() != fetched.digest.str()) {
        throw Error(ErrorCategory::usage,
                    "create '" + vm + "'",
                    "a VM of that name exists and was not created by lume-unlock" +
                        std::string(lume_digest.ok() ? " (it holds " + lume_digest.value() +
                                                           ", not " + fetched.digest.str() + ")"
                                                     : " from " + m_reference.str()),
                    "choose another name, or delete it first with 'lume delete " + vm + "'");
      }
      vm_observed += ", same image " + short_digest(fetched.digest.str());
    }
  }
  const bool running = m_observed_vm && m_observed_vm->status == lume::VmStatus::running;
  if (!running && host.max_vms > 0 && host.available_slots == 0) {
    throw Error(ErrorCategory::lume_api,
                "create '" + vm + "'",
                "Lume already runs " + std::to_string(host.vm_count) + " of at most " +
                    std::to_string(host.max_vms) + " macOS VMs",
                "stop one with 'lume stop NAME' and run create again");
  }
  if (auto warning = lume::host_preference_warning(lume::read_host_preference())) {
    m_outcome.warnings.push_back(*warning);
  }
  for (const auto& warning : m_outcome.warnings) {
    if (m_services.warn) {
      m_services.warn(warning);
    }
  }

  Plan plan("create");
  const std::string sizes =
      std::to_string(desired_cpu()) + " vCPU, " + util::format_size(desired_memory());
  plan.add({"preflight",
            "recipe " +
                (m_options.recipe ? "'" + m_recipe.path + "'" : std::string("(none: --from)")) +
                ", Lume " + host.status + " (" + std::to_string(host.vm_count) + "/" +
                std::to_string(host.max_vms) + " running), VM '" + vm + "'",
            true,
            "VM " + vm_observed,
            {}});
  if (!m_recipe.install.empty()) {
    if (m_services.cache == nullptr || m_services.artifact_http == nullptr) {
      throw Error(ErrorCategory::failure,
                  "create '" + vm + "'",
                  "the recipe has an install: block but no artifact cache was set up");
    }
    const recipe::LockFile* lock = m_lock ? &*m_lock : nullptr;
    for (auto& warning : unpinned_warnings(m_recipe, lock)) {
      m_outcome.warnings.push_back(std::move(warning));
    }
    plan.add(
        {"fetch",
         describe_fetch(m_recipe, lock, m_services.cache),
         std::nullopt,
         all_cached(m_recipe, lock, m_services.cache) ? "all in the cache" : "some to download",
         [this] { return step_fetch(); }});
  }
  if (from_ipsw) {
    plan.add({"image",
              "install macOS from IPSW " + *m_recipe.source.ipsw + " with unattended setup " +
                  *m_recipe.source.unattended + " into '" + vm + "' (Lume: POST /lume/vms)",
              found.has_value(),
              vm_observed,
              [this] { return step_install_ipsw(); }});
  } else {
    plan.add(
        {"image",
         "pull " + m_reference.str() + (m_outcome.locked ? " (locked)" : "") + " into '" + vm + "'",
         found ? std::optional<bool>() : std::optional<bool>(false),
         vm_observed,
         [this] { return step_image(); }});
  }
  std::optional<bool> resize_in_place = false;
  std::string resize_observed;
  if (m_observed_vm) {
    resize_in_place =
        m_observed_vm->cpu_count == desired_cpu() && m_observed_vm->memory_size == desired_memory();
    resize_observed = std::to_string(m_observed_vm->cpu_count) + " vCPU, " +
                      util::format_size(m_observed_vm->memory_size);
  }
  plan.add({"resize", "set " + sizes + " while stopped", resize_in_place, resize_observed, [this] {
              return step_resize();
            }});
  plan.add(
      {"boot",
       "run without display, wait for IP and SSH",
       m_observed_vm ? std::optional<bool>(m_observed_vm->ssh_ready()) : std::optional<bool>(false),
       m_observed_vm ? m_observed_vm->status_text : "",
       [this] { return step_boot(); }});
  plan.add({"connect", "SSH login (password first, then the per-VM key)", std::nullopt, "", [this] {
              return step_connect();
            }});
  plan.add({"facts", "read the guest's OS, architecture, uid and home", std::nullopt, "", [this] {
              return step_facts();
            }});
  plan.add({"install-shim",
            "install the bundle " + m_services.bundle.manifest().version +
                " entry for the guest (" + m_options.bundle_source + ")",
            std::nullopt,
            "",
            [this] { return step_install_shim(); }});
  plan.add({"probe",
            "probe stock and with the shim (Apple ceiling " +
                std::to_string(profile().apple_family_max) + ", threadgroup memory " +
                std::to_string(profile().max_threadgroup_memory) + ")",
            std::nullopt,
            "",
            [this] { return step_probe(); }});
  if (!m_recipe.install.empty()) {
    std::string dests;
    for (const auto& item : m_recipe.install) {
      dests += (dests.empty() ? "" : ", ") + item.dest;
    }
    plan.add({"install",
              "put the fetched artifacts into the guest (" + dests +
                  "): files that differ streamed over SFTP, checked by SHA-256, moved into "
                  "place all or none",
              std::nullopt,
              "",
              [this] { return step_install_artifacts(); }});
  }
  std::string allow_names;
  for (const auto& name : m_allow_entries) {
    allow_names += (allow_names.empty() ? "'" : ", '") + name + "'";
  }
  const std::string allow_part =
      m_allow_entries.empty() ? ""
      : m_options.exclusive   ? "; --exclusive: remove the entries added with allow: " + allow_names
                              : "; keep the entries added with allow: " + allow_names;
  plan.add({"enablement",
            "apply " + std::to_string(m_recipe.enablement.entries.size()) + " enablement entr" +
                (m_recipe.enablement.entries.size() == 1 ? "y" : "ies") + " of the recipe" +
                allow_part,
            std::nullopt,
            "",
            [this] { return step_enablement(); }});
  plan.add(
      {"provenance", "write the provenance record (guest, then host)", std::nullopt, "", [this] {
         return step_provenance();
       }});
  if (m_options.bench) {
    plan.add({"bench",
              "measure with llama-bench stock and unlocked: " + describe_bench(*m_options.bench) +
                  "; record the figures (guest, then host)",
              std::nullopt,
              "",
              [this] { return step_bench(); }});
  }
  return plan;
}

lume::VmDetails CreatePipeline::current_details() {
  const lume::VmState state = m_services.lume.get(lume::VmRef{m_options.vm}).value_or_throw();
  if (const auto* details = details_of(state)) {
    return *details;
  }
  throw Error(ErrorCategory::lume_api,
              "VM '" + m_options.vm.str() + "'",
              "Lume still reports a pull (" + lume::describe(state) + ")",
              "wait for the pull to finish, then run create again");
}

StepResult CreatePipeline::step_fetch() {
  m_staging.emplace(apply::StagingArea::create(*m_services.cache).value_or_throw());
  fetch::FetchServices services{
      *m_services.artifact_http, &m_services.registry, m_services.progress, m_services.mirrors};
  m_outcome.fetched =
      apply::stage_artifacts(
          m_recipe, m_lock ? &*m_lock : nullptr, *m_services.cache, services, *m_staging)
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
}

StepResult CreatePipeline::step_install_artifacts() {
  // The support folder's staging root: on the home's volume, as the destinations normally are.
  const std::string scratch = enablement::support_dir_of_home(m_facts->home) + "/staging";
  const bool link_shared = !m_options.copy_shared && apply::any_shared(m_outcome.fetched);
  std::vector<apply::StagedArtifact> copied;
  for (const auto& artifact : m_outcome.fetched) {
    if (!link_shared || !artifact.item.share) {
      copied.push_back(artifact);
    }
  }
  apply::ArtifactInstallReport report =
      apply::install_artifacts(
          *m_session, copied, m_outcome.shim->installed, scratch, m_services.progress)
          .value_or_throw();
  std::string summary = summarize_install(report);
  if (link_shared) {
    const apply::SharedLinkReport links =
        apply::link_shared_artifacts(
            *m_session, m_outcome.fetched, *m_services.cache, m_options.guest_share_root, scratch)
            .value_or_throw();
    report.records = apply::in_recipe_order(m_outcome.fetched, report.records, links.records);
    summary += "; " + summarize_links(links);
    m_outcome.artifacts = report;
    m_staging.reset();
    return {report.changed() || links.changed(), summary};
  }
  if (m_options.copy_shared && apply::any_shared(m_outcome.fetched)) {
    summary += "; share: true items copied into the VM (an image must be complete)";
  }
  m_outcome.artifacts = report;
  m_staging.reset(); // the unpacked trees are in the guest now
  return {report.changed(), summary};
}

StepResult CreatePipeline::step_image() {
  transfer::ImagePullRequest request{
      m_reference, m_options.vm, std::chrono::hours(6), m_services.progress, {}};
  request.trusted_keys = m_options.trusted_keys;
  transfer::PulledImage pulled =
      transfer::pull_image(m_services.lume, m_services.registry, request).value_or_throw();
  m_outcome.image = pulled;
  return {pulled.changed, (pulled.changed ? "pulled " : "already holds ") + pulled.digest.str()};
}

StepResult CreatePipeline::step_install_ipsw() {
  lume::IpswInstallRequest request;
  request.vm = m_options.vm;
  request.ipsw = *m_recipe.source.ipsw;
  request.unattended = *m_recipe.source.unattended;
  request.cpu = desired_cpu();
  request.memory_bytes = desired_memory();
  if (m_recipe.vm.disk_bytes) {
    request.disk_bytes = *m_recipe.vm.disk_bytes;
  }
  request.display = m_recipe.vm.display;
  request.timeout = m_options.install_timeout;
  request.settle = m_options.install_settle;
  request.progress = m_services.progress;
  return step_result(lume::install_from_ipsw(m_services.lume, request).value_or_throw());
}

StepResult CreatePipeline::step_resize() {
  lume::VmDetails vm = current_details();
  if (vm.cpu_count == desired_cpu() && vm.memory_size == desired_memory()) {
    return {false, std::to_string(vm.cpu_count) + " vCPU, " + util::format_size(vm.memory_size)};
  }
  lume::stop_vm(m_services.lume, m_options.vm, std::chrono::minutes(2), m_services.progress)
      .value_or_throw();
  lume::PatchRequest patch;
  if (vm.cpu_count != desired_cpu()) {
    patch.cpu = desired_cpu();
  }
  if (vm.memory_size != desired_memory()) {
    patch.memory_bytes = desired_memory();
  }
  m_services.lume.patch(lume::VmRef{m_options.vm}, patch).value_or_throw();
  return {true,
          std::to_string(vm.cpu_count) + " vCPU, " + util::format_size(vm.memory_size) + " -> " +
              std::to_string(desired_cpu()) + " vCPU, " + util::format_size(desired_memory())};
}

StepResult CreatePipeline::step_boot() {
  // Shared install items: the cache's blob folder, read-only, for the links install makes.
  std::vector<lume::SharedDirectory> shared;
  if (!m_options.copy_shared && m_services.cache != nullptr) {
    for (const auto& item : m_recipe.install) {
      if (item.share && shared.empty()) {
        shared.push_back(apply::cache_share(*m_services.cache));
      }
    }
  }
  return step_result(
      lume::boot_vm(
          m_services.lume, m_options.vm, m_options.boot_timeout, m_services.progress, shared)
          .value_or_throw());
}

StepResult CreatePipeline::step_connect() {
  m_session = apply::connect_when_ready(m_services.connect, m_options.ssh_wait);
  return {false, "connected"};
}

StepResult CreatePipeline::step_facts() {
  m_facts = guest::gather_guest_facts(*m_session).value_or_throw();
  const std::string os =
      m_facts->product_version ? "macOS " + *m_facts->product_version : m_facts->kernel;
  return {false, os + " " + m_facts->machine + ", home " + m_facts->home};
}

StepResult CreatePipeline::step_install_shim() {
  apply::ShimInstallReport report =
      apply::install_shim(*m_session, m_services.bundle, *m_facts).value_or_throw();
  m_outcome.shim = report;
  const std::size_t files = 1 + report.installed.support.size() + (report.installed.probe ? 1 : 0);
  return {report.changed,
          std::string(report.changed ? "installed " : "in place: ") + std::to_string(files) +
              " files for " + report.platform};
}

StepResult CreatePipeline::step_probe() {
  apply::ProbeRun run =
      apply::run_probes(*m_session, m_outcome.shim->installed, profile(), m_options.probe_extra_env)
          .value_or_throw();
  apply::ProbeVerdict verdict = apply::judge_probe(run.stock, run.unlocked, profile());
  m_outcome.probe = run;
  m_outcome.verdict = verdict;
  apply::require_probe_pass(verdict, m_options.vm).value_or_throw();
  return {false,
          describe_changes(verdict) + ", threadgroup memory " +
              std::to_string(verdict.stock_threadgroup_memory) + " -> " +
              std::to_string(verdict.unlocked_threadgroup_memory)};
}

StepResult CreatePipeline::step_enablement() {
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
    const enablement::EnablementEntry* entry = applied.ok() ? applied.value().find(name) : nullptr;
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
      enablement_records(report.applied, target.layout, target.settings, origins).value_or_throw();
  const std::size_t n = desired.entries.size();
  const auto named = [](const std::string& verb, const std::vector<std::string>& names) {
    std::string text;
    for (const auto& name : names) {
      text +=
          (text.empty() ? "; " + verb + " the entries added with allow: '" : ", '") + name + "'";
    }
    return text;
  };
  const std::string kept = named("kept", m_outcome.kept_allow_entries) +
                           named("removed", m_outcome.removed_allow_entries);
  return {report.changed,
          (report.changed ? std::to_string(report.changes.size()) + " change(s)"
                          : std::to_string(n) + " entr" + (n == 1 ? "y" : "ies") + " in place") +
              kept};
}

StepResult CreatePipeline::step_provenance() {
  const lume::VmDetails vm = current_details();
  const std::string guest_path =
      enablement::support_dir_of_home(m_facts->home) + "/provenance.json";
  std::optional<provenance::Provenance> previous;
  if (auto text = m_session->read_file(guest_path, provenance::k_max_provenance_bytes); text.ok()) {
    if (auto parsed = provenance::parse_provenance(text.value()); parsed.ok()) {
      previous = parsed.value();
    }
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
  const std::string bytes = provenance::to_json(record).dump(2) + "\n";
  m_session->upload(bytes, guest_path, 0644).value_or_throw();
  provenance::write_provenance(m_options.state_dir, record).value_or_throw();
  m_outcome.record = record;
  return {true,
          "wrote " + guest_path + " and " +
              provenance::provenance_path(m_options.state_dir, m_options.vm).value()};
}

StepResult CreatePipeline::step_bench() {
  BenchOptions options = *m_options.bench;
  options.vm = m_options.vm;
  options.state_dir = m_options.state_dir;
  BenchOutcome outcome = run_bench(*m_session, options, m_services.progress).value_or_throw();
  m_outcome.bench = outcome;
  if (!outcome.failures.empty()) {
    std::string why = "the gate failed:";
    for (const std::string& failure : outcome.failures) {
      why += "\n  " + failure;
    }
    throw Error(ErrorCategory::verification,
                "bench of VM '" + m_options.vm.str() + "'",
                why,
                "the VM '" + m_options.vm.str() +
                    "' was created and left in place, and the figures are in its record "
                    "('lume-unlock status " +
                    m_options.vm.str() +
                    "'); fix the cause and measure again with "
                    "'lume-unlock bench " +
                    m_options.vm.str() + " --model " + options.request.model + "'");
  }
  return {true, bench_summary(outcome.record)};
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
    provenance::ImageInfo image;
    image.reference = outcome.image->reference;
    image.digest = outcome.image->digest.str();
    if (!outcome.image->lume_manifest_digest.empty()) {
      image.lume_manifest_digest = outcome.image->lume_manifest_digest;
    }
    if (outcome.image->signature) {
      image.signed_by = outcome.image->signature->key_fingerprint;
    }
    record.image = image;
  }
  provenance::HardwareInfo hardware;
  hardware.cpu = static_cast<std::int64_t>(vm.cpu_count);
  hardware.memory_bytes = vm.memory_size;
  if (vm.disk_size.total > 0) {
    hardware.disk_bytes = vm.disk_size.total;
  }
  record.hardware = hardware;
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
  record.guest = guest;
  if (outcome.shim) {
    const apply::InstalledShim& installed = outcome.shim->installed;
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
    record.shim = shim;
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

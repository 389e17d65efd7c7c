// CreatePipeline (pipeline/create.hpp), part one: plan(), the read-only preflight it runs first
// (the recipe and its lock, the image reference, what Lume says of the host and the VM: no POST,
// PATCH or SSH, so --dry-run can run it), and the steps on the VM through Lume's API. The guest,
// artifact and record steps are in create_steps.cpp.

#include "pipeline/create.hpp"

#include "guest/ssh_session.hpp"
#include "lume/client.hpp"
#include "lume/host_preference.hpp"
#include "pipeline/vm_state.hpp"
#include "util/atomic_file.hpp"
#include "util/size.hpp"

#include <algorithm>

namespace lume_unlock::pipeline {

namespace {

std::string short_digest(const std::string& digest) {
  return digest.size() > 19 ? digest.substr(0, 19) + "…" : digest;
}

std::string sizes(std::uint64_t cpu, std::uint64_t memory) {
  return std::to_string(cpu) + " vCPU, " + util::format_size(memory);
}

Error not_ours(const std::string& vm, const std::string& detail) {
  return Error(ErrorCategory::usage,
               "create '" + vm + "'",
               "a VM of that name exists and was not created by lume-unlock" + detail,
               "choose another name, or delete it first with 'lume delete " + vm + "'");
}

std::optional<lume::VmState> find_vm(lume::LumeApi& lume, const std::string& vm) {
  auto lookup = lume.find(lume::VmRef{vm});
  if (lookup.ok() || !lume::is_sticky_pull_failure(lookup.error())) {
    return std::move(lookup).value_or_throw();
  }
  // Lume masks the name behind an earlier failed pull until a new pull under it starts
  // (lume-api.md §3.3). With no VM there, the image step's pull clears it; over an existing
  // VM such a pull fails (and sticks) again, so only a restart of Lume clears it.
  // The VM cannot be looked up by name now, so look where a new VM of that name would go.
  const auto location = lume::default_location_path(lume);
  const std::string vm_dir = location.ok() ? location.value() + "/" + vm : std::string();
  if (!location.ok() || util::path_exists(vm_dir + "/config.json")) {
    throw lookup.error().with_hint("Lume keeps this answer for '" + vm +
                                   "' until its server restarts" +
                                   (vm_dir.empty() ? std::string() : "; the VM is in " + vm_dir) +
                                   ": restart Lume ('lume serve') and run create again");
  }
  return std::nullopt;
}

} // namespace

std::uint32_t CreatePipeline::desired_cpu() const {
  return m_options.cpu.value_or(static_cast<std::uint32_t>(m_recipe.vm.cpu));
}

std::uint64_t CreatePipeline::desired_memory() const {
  return m_options.memory_bytes.value_or(m_recipe.vm.memory_bytes);
}

Plan CreatePipeline::plan() {
  read_recipe_and_lock();
  bool from_ipsw = false;
  if (m_options.clone_source) {
    m_golden = check_golden_source(m_services.lume,
                                   m_options.state_dir,
                                   *m_options.clone_source,
                                   m_recipe,
                                   m_lock ? &*m_lock : nullptr);
    const provenance::Provenance& source = m_golden->record;
    m_outcome.reference = source.image && source.image->reference
                              ? *source.image->reference
                              : "clone of " + m_golden->vm.str();
    m_outcome.inherited_image = source.image;
    m_outcome.cloned_from =
        provenance::ClonedFrom{m_golden->vm.str(), m_golden->record_sha256, m_golden->fingerprint};
  } else {
    from_ipsw = choose_reference();
  }
  const Observed observed = observe_lume(from_ipsw);
  if (auto warning = lume::host_preference_warning(lume::read_host_preference())) {
    m_outcome.warnings.push_back(*warning);
  }
  for (const auto& warning : m_outcome.warnings) {
    if (m_services.warn) {
      m_services.warn(warning);
    }
  }

  Plan plan(m_golden ? "clone" : "create");
  plan.add(preflight_step(observed));
  if (!m_recipe.install.empty()) {
    plan.add(fetch_step());
  }
  plan.add(m_golden    ? clone_step(observed)
           : from_ipsw ? install_ipsw_step(observed)
                       : image_step(observed));
  plan.add(resize_step());
  plan.add(boot_step());
  plan.add(connect_step());
  if (m_golden) {
    plan.add(revoke_source_key_step());
  }
  for (Step step : {facts_step(), install_shim_step(), probe_step()}) {
    plan.add(std::move(step));
  }
  if (!m_recipe.install.empty()) {
    plan.add(install_artifacts_step());
  }
  plan.add(enablement_step());
  plan.add(provenance_step());
  if (m_options.bench) {
    plan.add(bench_step());
  }
  return plan;
}

lume::VmDetails CreatePipeline::current_details() {
  const lume::VmState state = m_services.lume.get(lume::VmRef{m_options.vm}).value_or_throw();
  if (const auto* details = std::get_if<lume::VmDetails>(&state)) {
    return *details;
  }
  throw Error(ErrorCategory::lume_api,
              "VM '" + m_options.vm.str() + "'",
              "Lume still reports a pull (" + lume::describe(state) + ")",
              "wait for the pull to finish, then run create again");
}

void CreatePipeline::read_recipe_and_lock() {
  const std::string& vm = m_options.vm; // a lume::VmName: checked where it was parsed
  if (!m_options.recipe) {
    if (!m_options.from) {
      throw Error(ErrorCategory::usage,
                  "create '" + vm + "'",
                  "no recipe and no image given",
                  "give --recipe FILE (e.g. image-recipes/tahoe-llm.yaml) or --from REF");
    }
    return;
  }
  m_recipe = *m_options.recipe;
  // An external shim whose bytes are not the recipe's stops the create here, before any step.
  m_external_shim = recipe::verified_external_shim(m_recipe).value_or_throw();
  const std::string lock_path = recipe::lock_path_for(m_recipe.path);
  if (!util::path_exists(lock_path)) {
    return;
  }
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

bool CreatePipeline::choose_reference() {
  std::string reference_text;
  if (m_options.from) {
    reference_text = *m_options.from;
  } else if (m_recipe.source.image) {
    reference_text = *m_recipe.source.image;
    if (const auto* pinned = m_lock ? m_lock->find("source.image") : nullptr) {
      // The recipe's tag stays beside the pinned digest: Lume pulls by tag, and an upstream
      // image has no sha256-<hex> tag, so the pull goes through the tag while it still names
      // the digest (transfer/image_pull.cpp; .manifest-digest is compared afterwards).
      const auto written = oci::parse_reference(pinned->reference);
      reference_text = written.ok() && written.value().tag && !written.value().digest
                           ? pinned->reference + "@" + pinned->digest
                           : pinned->pinned;
      m_outcome.locked = true;
    }
  } else if (!m_recipe.source.unattended) {
    throw Error(ErrorCategory::usage,
                "create '" + m_options.vm.str() + "'",
                "the recipe installs from an IPSW without 'source.unattended', so the guest would "
                "have no SSH account",
                "add 'unattended: tahoe' under 'source' (Lume then creates the user lume/lume "
                "with Remote Login on)");
  }
  if (reference_text.empty()) {
    m_outcome.reference = "ipsw:" + *m_recipe.source.ipsw;
    return true;
  }
  m_reference = oci::parse_reference(reference_text).value_or_throw();
  m_outcome.reference = m_reference.str();
  return false;
}

CreatePipeline::Observed CreatePipeline::observe_lume(bool from_ipsw) {
  Observed observed;
  observed.host = m_services.lume.host_status().value_or_throw();
  observed.found = find_vm(m_services.lume, m_options.vm);
  const bool ours = read_allow_entries();
  observed.vm = "absent";
  if (observed.found) {
    if (const auto* details = std::get_if<lume::VmDetails>(&*observed.found)) {
      m_observed_vm = *details;
    }
    observed.vm = lume::describe(*observed.found) + (ours ? ", ours" : "");
    if (m_golden) {
      check_clone_target(observed, ours);
    } else if (!ours) {
      observed.vm += check_same_image(from_ipsw);
    }
  }
  const lume::HostStatus& host = observed.host;
  const bool running = m_observed_vm && m_observed_vm->status == lume::VmStatus::running;
  if (!running && host.max_vms > 0 && host.available_slots == 0) {
    throw Error(ErrorCategory::lume_api,
                "create '" + m_options.vm.str() + "'",
                "Lume already runs " + std::to_string(host.vm_count) + " of at most " +
                    std::to_string(host.max_vms) + " macOS VMs",
                "stop one with 'lume stop NAME' and run create again");
  }
  return observed;
}

/// Whether the VM is ours (it has a host record); if so, notes the entries that record says were
/// added with `allow` and the recipe does not name.
bool CreatePipeline::read_allow_entries() {
  const std::string& vm = m_options.vm;
  if (!util::path_exists(provenance::provenance_path(m_options.state_dir, vm).value_or_throw())) {
    return false;
  }
  if (auto host_record = provenance::read_provenance(m_options.state_dir, vm); host_record.ok()) {
    for (const auto& [name, origin] : enablement_origins(host_record.value())) {
      if (origin == provenance::k_origin_allow && m_recipe.enablement.find(name) == nullptr) {
        m_allow_entries.push_back(name);
      }
    }
  }
  return true;
}

/// A VM of that name that is not ours is only taken over when Lume holds the very image asked
/// for; returns ", same image <digest>" then, and throws otherwise.
std::string CreatePipeline::check_same_image(bool from_ipsw) {
  const std::string& vm = m_options.vm;
  if (from_ipsw) {
    throw not_ours(vm, "");
  }
  const auto fetched = m_services.registry.get_manifest(m_reference).value_or_throw();
  const auto lume_digest =
      lume::read_manifest_digest(lume::vm_directory(m_services.lume, vm).value_or_throw());
  if (!lume_digest.ok()) {
    throw not_ours(vm, " from " + m_reference.str());
  }
  if (lume_digest.value() != fetched.digest.str()) {
    throw not_ours(vm, " (it holds " + lume_digest.value() + ", not " + fetched.digest.str() + ")");
  }
  return ", same image " + short_digest(fetched.digest.str());
}

Step CreatePipeline::preflight_step(const Observed& observed) const {
  const lume::HostStatus& host = observed.host;
  return Step::observed_as(
      "preflight",
      "recipe " + (m_options.recipe ? "'" + m_recipe.path + "'" : std::string("(none: --from)")) +
          ", Lume " + host.status + " (" + std::to_string(host.vm_count) + "/" +
          std::to_string(host.max_vms) + " running), VM '" + m_options.vm.str() + "'",
      true,
      "VM " + observed.vm,
      {});
}

Step CreatePipeline::image_step(const Observed& observed) {
  return Step::observed_as(
      "image",
      "pull " + m_reference.str() + (m_outcome.locked ? " (locked)" : "") + " into '" +
          m_options.vm.str() + "'",
      observed.found ? std::optional<bool>() : std::optional<bool>(false),
      observed.vm,
      [this]() -> StepResult {
        transfer::ImagePullRequest request;
        request.reference = m_reference;
        request.vm = m_options.vm;
        request.progress = m_services.progress;
        request.trusted_keys = m_options.trusted_keys;
        m_outcome.image =
            transfer::pull_image(m_services.lume, m_services.registry, request).value_or_throw();
        return {m_outcome.image->changed,
                (m_outcome.image->changed ? "pulled " : "already holds ") +
                    m_outcome.image->digest.str()};
      });
}

Step CreatePipeline::install_ipsw_step(const Observed& observed) {
  return Step::observed_as(
      "image",
      "install macOS from IPSW " + *m_recipe.source.ipsw + " with unattended setup " +
          *m_recipe.source.unattended + " into '" + m_options.vm.str() + "' (Lume: POST /lume/vms)",
      observed.found.has_value(),
      observed.vm,
      [this] {
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
      });
}

/// A clone goes only where no VM is, or resumes over the clone it made itself.
void CreatePipeline::check_clone_target(const Observed& observed, bool ours) {
  const std::string& vm = m_options.vm;
  const std::string& source = m_golden->vm;
  std::optional<provenance::ClonedFrom> cloned;
  if (ours) {
    if (auto record = provenance::read_provenance(m_options.state_dir, vm); record.ok()) {
      cloned = record.value().cloned_from;
    }
  }
  if (!cloned || cloned->vm != source) {
    throw Error(ErrorCategory::usage,
                "clone of VM '" + source + "' into '" + vm + "'",
                "a VM named '" + vm + "' exists already (" + observed.vm + ")" +
                    (ours ? ", and it is not a clone of '" + source + "'" : ""),
                "choose another name for the clone, or remove that VM first");
  }
}

Step CreatePipeline::clone_step(const Observed& observed) {
  const std::string& source = m_golden->vm;
  return Step::observed_as(
      "clone",
      "clone the verified VM '" + source + "' (record " + short_digest(m_golden->record_sha256) +
          ") into '" + m_options.vm.str() +
          "' through Lume: a copy-on-write copy of its disk, nothing pulled",
      observed.found.has_value(),
      observed.found ? "a clone of '" + source + "'" : "absent",
      [this]() -> StepResult {
        const std::string& vm = m_options.vm;
        const std::string& source = m_golden->vm;
        if (m_services.lume.find(lume::VmRef{vm}).value_or_throw()) {
          return {false, "already cloned from '" + source + "'"};
        }
        m_services.lume.clone(lume::CloneRequest{source, vm, std::nullopt, std::nullopt})
            .value_or_throw();
        // The clone is ours from here on: a create that stops now resumes over it. Its guest
        // answers with the source's host key (the disk is a copy), so that key is its pin.
        provenance::Provenance record;
        record.vm = vm;
        record.lume_url = m_options.lume_url;
        record.image = m_outcome.inherited_image;
        record.recipe = provenance::RecipeInfo{m_options.recipe_path, m_recipe.sha256};
        record.cloned_from = m_outcome.cloned_from;
        record.created_at = record.updated_at = provenance::rfc3339_now();
        provenance::write_provenance(m_options.state_dir, record).value_or_throw();
        const auto paths = guest::vm_key_paths(m_options.state_dir, vm).value_or_throw();
        util::write_file_atomic(paths.known_host, m_golden->known_host, 0600).value_or_throw();
        return {true, "cloned '" + source + "': 0 bytes pulled"};
      });
}

Step CreatePipeline::resize_step() {
  const auto& vm = m_observed_vm;
  return Step::observed_as(
      "resize",
      "set " + sizes(desired_cpu(), desired_memory()) + " while stopped",
      vm && vm->cpu_count == desired_cpu() && vm->memory_size == desired_memory(),
      vm ? sizes(vm->cpu_count, vm->memory_size) : "",
      [this]() -> StepResult {
        const lume::VmDetails now = current_details();
        const std::string was = sizes(now.cpu_count, now.memory_size);
        if (now.cpu_count == desired_cpu() && now.memory_size == desired_memory()) {
          return {false, was};
        }
        lume::stop_vm(m_services.lume, m_options.vm, std::chrono::minutes(2), m_services.progress)
            .value_or_throw();
        lume::PatchRequest patch;
        if (now.cpu_count != desired_cpu()) {
          patch.cpu = desired_cpu();
        }
        if (now.memory_size != desired_memory()) {
          patch.memory_bytes = desired_memory();
        }
        m_services.lume.patch(lume::VmRef{m_options.vm}, patch).value_or_throw();
        return {true, was + " -> " + sizes(desired_cpu(), desired_memory())};
      });
}

Step CreatePipeline::boot_step() {
  return Step::observed_as("boot",
                           "run without display, wait for IP and SSH",
                           m_observed_vm && m_observed_vm->ssh_ready(),
                           m_observed_vm ? m_observed_vm->status_text : "",
                           [this] {
                             // Shared install items: the cache's blob folder, read-only, for the
                             // links install makes.
                             std::vector<lume::SharedDirectory> shared;
                             if (!m_options.copy_shared && m_services.cache != nullptr &&
                                 std::any_of(m_recipe.install.begin(),
                                             m_recipe.install.end(),
                                             [](const auto& item) { return item.share; })) {
                               shared.push_back(apply::cache_share(*m_services.cache));
                             }
                             return step_result(lume::boot_vm(m_services.lume,
                                                              m_options.vm,
                                                              m_options.boot_timeout,
                                                              m_services.progress,
                                                              shared,
                                                              m_recipe.vm.vnc)
                                                    .value_or_throw());
                           });
}

} // namespace lume_unlock::pipeline

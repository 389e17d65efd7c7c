// Part of CreatePipeline (pipeline/create.hpp): the read-only preflight that plan() runs before
// it lists any step: the recipe and its lock, the image reference, and what Lume says of the host
// and the VM. It sends no POST or PATCH and opens no SSH session, so --dry-run can run it.

#include "lume/client.hpp"
#include "lume/host_preference.hpp"
#include "lume/storage.hpp"
#include "pipeline/create.hpp"
#include "pipeline/vm_record.hpp"
#include "recipe/lock_file.hpp"
#include "util/size.hpp"

#include <sys/stat.h>

namespace lume_unlock::pipeline {

namespace {

bool file_exists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

std::string short_digest(const std::string& digest) {
  return digest.size() > 19 ? digest.substr(0, 19) + "…" : digest;
}

} // namespace

void CreatePipeline::read_recipe_and_lock() {
  const std::string& vm = m_options.vm; // a lume::VmName: checked where it was parsed
  if (m_options.recipe) {
    m_recipe = *m_options.recipe;
  } else if (!m_options.from) {
    throw Error(ErrorCategory::usage,
                "create '" + vm + "'",
                "no recipe and no image given",
                "give --recipe FILE (e.g. image-recipes/tahoe-llm.yaml) or --from REF");
  }
  if (m_options.recipe) {
    // An external shim whose bytes are not the recipe's stops the create here, before any step.
    m_external_shim = recipe::verified_external_shim(m_recipe).value_or_throw();
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
}

bool CreatePipeline::choose_reference() {
  const std::string& vm = m_options.vm;
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
  return reference_text.empty();
}

CreatePipeline::Observed CreatePipeline::observe_lume(bool from_ipsw) {
  Observed observed;
  observed.host = m_services.lume.host_status().value_or_throw();
  observed.found = find_vm();
  const bool ours = read_allow_entries();
  observed.vm = "absent";
  if (observed.found) {
    if (const auto* details = std::get_if<lume::VmDetails>(&*observed.found)) {
      m_observed_vm = *details;
    }
    observed.vm = lume::describe(*observed.found) + (ours ? ", ours" : "");
    if (!ours) {
      observed.vm += check_same_image(from_ipsw);
    }
  }
  check_running_limit(observed.host);
  return observed;
}

std::optional<lume::VmState> CreatePipeline::find_vm() {
  const std::string& vm = m_options.vm;
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
  return found;
}

/// Whether the VM is ours (it has a host record); if so, notes the entries that record says were
/// added with `allow` and the recipe does not name.
bool CreatePipeline::read_allow_entries() {
  const std::string& vm = m_options.vm;
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
  return ours;
}

/// A VM of that name that is not ours is only taken over when Lume holds the very image asked
/// for; returns ", same image <digest>" then, and throws otherwise.
std::string CreatePipeline::check_same_image(bool from_ipsw) {
  const std::string& vm = m_options.vm;
  if (from_ipsw) {
    throw Error(ErrorCategory::usage,
                "create '" + vm + "'",
                "a VM of that name exists and was not created by lume-unlock",
                "choose another name, or delete it first with 'lume delete " + vm + "'");
  }
  const auto fetched = m_services.registry.get_manifest(m_reference).value_or_throw();
  const auto lume_digest =
      lume::read_manifest_digest(lume::vm_directory(m_services.lume, vm).value_or_throw());
  if (!lume_digest.ok() || lume_digest.value() != fetched.digest.str()) {
    throw Error(ErrorCategory::usage,
                "create '" + vm + "'",
                "a VM of that name exists and was not created by lume-unlock" +
                    std::string(lume_digest.ok() ? " (it holds " + lume_digest.value() + ", not " +
                                                       fetched.digest.str() + ")"
                                                 : " from " + m_reference.str()),
                "choose another name, or delete it first with 'lume delete " + vm + "'");
  }
  return ", same image " + short_digest(fetched.digest.str());
}

void CreatePipeline::check_running_limit(const lume::HostStatus& host) const {
  const bool running = m_observed_vm && m_observed_vm->status == lume::VmStatus::running;
  if (!running && host.max_vms > 0 && host.available_slots == 0) {
    throw Error(ErrorCategory::lume_api,
                "create '" + m_options.vm.str() + "'",
                "Lume already runs " + std::to_string(host.vm_count) + " of at most " +
                    std::to_string(host.max_vms) + " macOS VMs",
                "stop one with 'lume stop NAME' and run create again");
  }
}

void CreatePipeline::report_warnings() {
  if (auto warning = lume::host_preference_warning(lume::read_host_preference())) {
    m_outcome.warnings.push_back(*warning);
  }
  for (const auto& warning : m_outcome.warnings) {
    if (m_services.warn) {
      m_services.warn(warning);
    }
  }
}

Step CreatePipeline::preflight_step(const Observed& observed) const {
  const std::string& vm = m_options.vm;
  const lume::HostStatus& host = observed.host;
  return {"preflight",
          "recipe " +
              (m_options.recipe ? "'" + m_recipe.path + "'" : std::string("(none: --from)")) +
              ", Lume " + host.status + " (" + std::to_string(host.vm_count) + "/" +
              std::to_string(host.max_vms) + " running), VM '" + vm + "'",
          true,
          "VM " + observed.vm,
          {}};
}

} // namespace lume_unlock::pipeline

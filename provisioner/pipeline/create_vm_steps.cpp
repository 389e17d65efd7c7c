// Part of CreatePipeline (pipeline/create.hpp): the VM through Lume's API: made from the image
// (or installed from an IPSW), resized while stopped, booted until SSH answers. Each step
// describes its own part of the plan beside the work it does.

#include "lume/vm_lifecycle.hpp"
#include "pipeline/create.hpp"
#include "util/size.hpp"

namespace lume_unlock::pipeline {

Step CreatePipeline::image_step(const Observed& observed) {
  return {"image",
          "pull " + m_reference.str() + (m_outcome.locked ? " (locked)" : "") + " into '" +
              m_options.vm.str() + "'",
          observed.found ? std::optional<bool>() : std::optional<bool>(false),
          observed.vm,
          [this] { return step_image(); }};
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

Step CreatePipeline::install_ipsw_step(const Observed& observed) {
  return {"image",
          "install macOS from IPSW " + *m_recipe.source.ipsw + " with unattended setup " +
              *m_recipe.source.unattended + " into '" + m_options.vm.str() +
              "' (Lume: POST /lume/vms)",
          observed.found.has_value(),
          observed.vm,
          [this] { return step_install_ipsw(); }};
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

Step CreatePipeline::resize_step() {
  const std::string sizes =
      std::to_string(desired_cpu()) + " vCPU, " + util::format_size(desired_memory());
  std::optional<bool> resize_in_place = false;
  std::string resize_observed;
  if (m_observed_vm) {
    resize_in_place =
        m_observed_vm->cpu_count == desired_cpu() && m_observed_vm->memory_size == desired_memory();
    resize_observed = std::to_string(m_observed_vm->cpu_count) + " vCPU, " +
                      util::format_size(m_observed_vm->memory_size);
  }
  return {"resize", "set " + sizes + " while stopped", resize_in_place, resize_observed, [this] {
            return step_resize();
          }};
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

Step CreatePipeline::boot_step() {
  return {"boot",
          "run without display, wait for IP and SSH",
          m_observed_vm ? std::optional<bool>(m_observed_vm->ssh_ready())
                        : std::optional<bool>(false),
          m_observed_vm ? m_observed_vm->status_text : "",
          [this] { return step_boot(); }};
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

} // namespace lume_unlock::pipeline

#include "pipeline/create.hpp"

namespace lume_unlock::pipeline {

CreatePipeline::CreatePipeline(CreateOptions options, CreateServices services)
    : m_options(std::move(options)), m_services(std::move(services)) {}

CreatePipeline::~CreatePipeline() = default;

std::uint32_t CreatePipeline::desired_cpu() const {
  return m_options.cpu.value_or(static_cast<std::uint32_t>(m_recipe.vm.cpu));
}

std::uint64_t CreatePipeline::desired_memory() const {
  return m_options.memory_bytes.value_or(m_recipe.vm.memory_bytes);
}

// The preflight (create_preflight.cpp) reads; each step then describes its own part of the plan
// beside the work it does (create_artifact_steps.cpp, create_vm_steps.cpp,
// create_guest_steps.cpp, create_record_steps.cpp).
Plan CreatePipeline::plan() {
  read_recipe_and_lock();
  const bool from_ipsw = choose_reference();
  const Observed observed = observe_lume(from_ipsw);
  report_warnings();

  Plan plan("create");
  plan.add(preflight_step(observed));
  if (!m_recipe.install.empty()) {
    plan.add(fetch_step());
  }
  plan.add(from_ipsw ? install_ipsw_step(observed) : image_step(observed));
  plan.add(resize_step());
  plan.add(boot_step());
  plan.add(connect_step());
  plan.add(facts_step());
  plan.add(install_shim_step());
  plan.add(probe_step());
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

} // namespace lume_unlock::pipeline

#pragma once

#include "cli/context.hpp"
#include "pipeline/create.hpp"
#include "pipeline/plan.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace lume_unlock::cli {

/// The outcome of a create for --json: the image, the shim files (with `bundle_source`), the
/// probe answers and changed families, the enabled programs, enablement changes and warnings
/// (sections of steps that did not run are absent).
nlohmann::json create_outcome_json(const pipeline::CreatePipeline& pipeline,
                                   const std::string& bundle_source);

/// The human summary of a create: the step reports, then the image, the shim files with their
/// SHA-256, the probe's stock and unlocked answers, and the enabled programs.
void print_create_summary(Context& context,
                          const pipeline::CreatePipeline& pipeline,
                          const std::vector<pipeline::StepReport>& reports,
                          const std::string& vm,
                          const std::string& bundle_source);

} // namespace lume_unlock::cli

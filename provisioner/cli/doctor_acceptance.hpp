#pragma once

#include "cli/context.hpp"
#include "cli/doctor.hpp"

namespace lume_unlock::cli {

/// `doctor --acceptance`: refuses an existing VM of the run's name (the run deletes its VM), then
/// runs pipeline::run_acceptance with this executable and the flags given (--recipe required) and
/// prints its table of steps (or the JSON report). Returns 0 when every step passed, else 1.
int run_acceptance(const DoctorOptions& options, Context& context);

} // namespace lume_unlock::cli

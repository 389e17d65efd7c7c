#pragma once

#include "cli/commands.hpp"
#include "pipeline/acceptance.hpp"

#include <optional>
#include <string>

namespace lume_unlock::cli {

/// The flags of `doctor`, shared by its host checks and --acceptance.
struct DoctorOptions {
  std::optional<std::string> recipe;
  std::optional<std::string> bundle;
  RegistryFlags registry;
  bool acceptance = false;
  std::string vm = pipeline::k_acceptance_vm;
  std::string out;
  bool keep = false;
  guest::ConnectionOptions connection;
};

/// `doctor --acceptance`: refuses an existing VM of the run's name (the run deletes its VM), then
/// runs pipeline::run_acceptance with this executable and the flags given (--recipe required) and
/// prints its table of steps (or the JSON report). Returns 0 when every step passed, else 1.
int run_acceptance(const DoctorOptions& options, Context& context);

} // namespace lume_unlock::cli

#pragma once

#include "cli/context.hpp"
#include "cli/registry_options.hpp"
#include "guest/ssh_session.hpp"
#include "pipeline/acceptance.hpp"

#include <CLI/CLI.hpp>

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

/// `lume-unlock doctor`: checks what lume-unlock needs on this host — Lume, the state directory,
/// the ParavirtualizedGraphics host preference (macOS), free disk for images, the recipe's
/// registry, the shim bundle — one line each with ok/warn/fail/skip and the fix.
void register_doctor(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli

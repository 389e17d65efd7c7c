#pragma once

#include "cli/context.hpp"
#include "cli/create_setup.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace lume_unlock::cli {

/// The arguments and flags of `bake`.
struct BakeCommandOptions {
  CreateSetup setup; ///< setup.vm empty: <recipe stem>-bake
  std::string push;
  std::uint32_t chunk_size_mb = 0;
  int push_timeout_seconds = 3 * 60 * 60;
  bool dry_run = false;
  std::string sign_key; ///< --sign-key, empty: unsigned
};

/// `lume-unlock bake RECIPE --push REGISTRY/ORG/NAME:TAG [--from REF] [--name VM] [--dry-run]`:
/// every create step, then stop, push through Lume, resolve and check the pushed digest, tag it
/// sha256-<hex>, and record it in the recipe's lock file and the host state. Prints the pinned
/// reference REGISTRY/ORG/NAME@sha256:… (stdout's last line).
void register_bake(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli

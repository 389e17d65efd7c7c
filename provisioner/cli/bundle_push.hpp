#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock bundle push ARCHIVE REF [--insecure-registry HOST]…`: publish a shim bundle
/// archive as an OCI artifact (DESIGN §4.4) and print REF@sha256:….
void register_bundle_push(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli

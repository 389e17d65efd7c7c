#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock sign REF@sha256:... --key FILE`: signs an image or shim bundle that is already in
/// a registry, in cosign's layout (signing/image_signer).
void register_sign(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli

#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock verify-signature REF --key FILE.pub [--key ...]`: checks that REF (a tag is
/// resolved to its verified digest first) carries a cosign signature by one of the keys.
/// Exit 6 with the reason when it does not.
void register_verify_signature(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli

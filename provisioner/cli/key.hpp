#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock key generate PREFIX`: writes an ECDSA P-256 signing key PREFIX.key (PKCS#8,
/// mode 0600, encrypted when LUME_UNLOCK_KEY_PASSPHRASE is set) and its public key PREFIX.pub.
void register_key(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli

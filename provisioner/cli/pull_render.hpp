#pragma once

// What `pull` prints beyond the pull itself: the plan of a --dry-run, the line naming the key
// that signed the digest, and the --verify check against the record baked into the image.

#include "cli/context.hpp"
#include "cli/pull.hpp"
#include "oci/digest.hpp"
#include "pipeline/pull.hpp"
#include "signing/signing.hpp"
#include "transfer/image_pull.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace lume_unlock::cli {

/// Renders the --verify check into `doc` (and, without --json, as text). Returns the exit code
/// (0 verified, 6 differences).
int render_verification(Context& context,
                        const pipeline::BakedGuestCheck& check,
                        nlohmann::json& doc);

/// Which key vouched for the digest, the same line for a dry run and a pull.
std::string verified_line(const oci::Digest& digest, const signing::VerifiedSignature& signature);

/// What a pull would do (none, refuse or pull), as JSON or text.
void render_dry_run(const PullCommandOptions& options,
                    Context& context,
                    const transfer::ImagePullPlan& plan);

} // namespace lume_unlock::cli

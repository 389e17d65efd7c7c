#include "cli/pull_render.hpp"

#include "signing/signing.hpp"

namespace lume_unlock::cli {

/// Renders the --verify check into `doc` (and, without --json, as text). Returns the exit code
/// (0 verified, 6 differences).
int render_verification(Context& context,
                        const pipeline::BakedGuestCheck& check,
                        nlohmann::json& doc) {
  const auto drifted = check.report.drifted();
  doc["verify"] = pipeline::to_json(check.report);
  doc["verify"]["verified"] = check.verified();
  if (check.record.image && check.record.image->reference) {
    doc["verify"]["baked_from"] = *check.record.image->reference;
  }
  if (!context.json()) {
    if (check.verified()) {
      context.out << "verified: " << check.report.items.size()
                  << " items of the baked record match the guest\n";
    } else {
      context.out << "not verified: " << drifted.size() << " of " << check.report.items.size()
                  << " items differ from the baked record\n";
      for (const auto& item : drifted) {
        context.out << "  " << item.item << ": expected " << item.expected << ", found "
                    << item.found << "\n";
      }
    }
  }
  return check.verified() ? 0 : exit_code(ErrorCategory::verification);
}

/// Which key vouched for the digest, the same line for a dry run and a pull.
std::string verified_line(const oci::Digest& digest, const signing::VerifiedSignature& signature) {
  return "signature verified: " + digest.str() + " signed by " + signature.key_fingerprint + " (" +
         signature.key_source + ")";
}

void render_dry_run(const PullCommandOptions& options,
                    Context& context,
                    const transfer::ImagePullPlan& plan) {
  const char* action = plan.in_place ? "none" : plan.conflict ? "refuse" : "pull";
  if (context.json()) {
    nlohmann::json doc = {{"dry_run", true},
                          {"reference", options.reference},
                          {"pull", plan.reference},
                          {"digest", plan.digest.str()},
                          {"vm", options.vm},
                          {"vm_exists", plan.vm_exists},
                          {"action", action},
                          {"no_op", plan.in_place}};
    if (plan.vm_manifest_digest) {
      doc["vm_manifest_digest"] = *plan.vm_manifest_digest;
    }
    if (plan.conflict) {
      doc["conflict"] = plan.conflict->why();
    }
    if (plan.signature) {
      doc["signature"] = signing::to_json(*plan.signature);
    }
    context.print_json(doc);
    return;
  }
  context.out << "resolved " << options.reference << " to " << plan.digest.str() << '\n';
  if (plan.signature) {
    context.out << verified_line(plan.digest, *plan.signature) << '\n';
  }
  if (plan.in_place) {
    context.out << "VM '" << options.vm << "' exists and already holds " << plan.digest.str()
                << ": nothing to do\n";
  } else if (plan.conflict) {
    context.out << "would refuse: " << plan.conflict->why() << '\n';
  } else {
    context.out << "VM '" << options.vm << "' does not exist: would ask Lume to pull "
                << plan.reference << " into it and check its .manifest-digest\n";
  }
}

} // namespace lume_unlock::cli

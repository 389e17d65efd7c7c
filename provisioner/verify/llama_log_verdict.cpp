#include "llama_log_verdict.hpp"

#include "llama_log_failures.hpp"
#include "llama_log_reader.hpp"
#include "util/text.hpp"

#include <string>
#include <vector>

namespace lume_unlock::verify {

namespace {

// Codes llama.cpp prints that no SDK defines (reference/metal-capabilities.md §4.2 rule 3).
constexpr int k_highest_real_apple = 1010;
constexpr int k_highest_real_common = 3003;
constexpr int k_apple7 = 1007;
constexpr const char* k_paravirtual = "Apple Paravirtual device";
constexpr const char* k_broad_reason =
    "the shim line is the superseded broad research build (familyMax/featureProfile)";

std::string family_text(const char* kind, int code) {
  return std::string(kind) + " family " + std::to_string(code);
}

/// Why the answers are ones no real GPU gives (empty: none is).
std::vector<std::string>
unsafe_reasons(const LlamaLogReport& r, bool broad_shim, bool paravirtual) {
  std::vector<std::string> unsafe;
  if (r.apple_family && *r.apple_family > k_highest_real_apple) {
    unsafe.push_back(family_text("Apple", *r.apple_family) + " is above " +
                     std::to_string(k_highest_real_apple) +
                     ", which no Apple GPU reports: a blanket-true family hook");
  }
  if (r.common_family && *r.common_family > k_highest_real_common) {
    unsafe.push_back(family_text("Common", *r.common_family) + " is above " +
                     std::to_string(k_highest_real_common) +
                     ", which no SDK defines: a blanket-true family hook");
  }
  if (broad_shim) {
    unsafe.push_back(k_broad_reason);
  }
  if (r.metal_family && r.shim && (paravirtual || !r.gpu_name)) {
    unsafe.push_back(
        family_text("Metal", *r.metal_family) +
        " is reported on a shimmed virtual device: MLX would then use residency sets and fail");
  }
  return unsafe;
}

/// SIMD-group reduction is off: stock, or shim-inactive when injection was evident.
void decide_without_reduction(LlamaLogReport& r, const LlamaLogOptions& options) {
  auto& reasons = r.reasons;
  const bool injection_evident = options.expect_shim || !r.inert_messages.empty();
  if (!r.shim && injection_evident) {
    r.verdict = LlamaLogVerdict::shim_inactive;
    reasons.push_back(
        "injection was requested but no shim activation line appears and llama.cpp saw the "
        "stock answers (check LUME_METAL_APPLE_FAMILY_MAX, the guard file, and whether the "
        "binary strips DYLD_ variables)");
    for (const auto& message : r.inert_messages) {
      reasons.push_back("the shim said: " + message);
    }
    return;
  }
  r.verdict = LlamaLogVerdict::stock;
  reasons.push_back(
      "SIMD-group reduction is off: llama.cpp runs matrix multiplication and normalisation on "
      "the CPU");
  if (r.shim) {
    reasons.push_back("a shim activation line is present, yet llama.cpp saw the stock answers");
  }
}

/// The fast paths run: says whether the shim line accounts for them.
void attribute_fast(LlamaLogReport& r, bool paravirtual) {
  auto& reasons = r.reasons;
  if (r.shim) {
    if (r.shim->apple_family_max && r.apple_family &&
        *r.shim->apple_family_max == *r.apple_family && paravirtual) {
      reasons.push_back("attributable to the shim: the Apple family equals appleFamilyMax on the "
                        "paravirtual device");
    } else {
      reasons.push_back(
          "the shim line is present but the Apple family does not match its appleFamilyMax on a "
          "paravirtual device: attribution is uncertain");
    }
  } else if (paravirtual) {
    reasons.push_back(
        "fast paths on a paravirtual device without a shim line: another interposer is present, or "
        "macOS reports more natively");
  }
}

/// ggml-metal reported failures in this run: broken, naming each line kept.
void decide_broken(LlamaLogReport& r) {
  r.verdict = LlamaLogVerdict::broken;
  r.reasons.push_back("ggml-metal reported " + util::plural(r.failure_count, "failure line") +
                      ": what the GPU computed cannot be trusted, however fast it ran");
  for (const MetalFailure& failure : r.failures) {
    r.reasons.push_back(describe_failure(failure, r.run.process));
  }
  if (r.failure_count > r.failures.size()) {
    r.reasons.push_back("and " + std::to_string(r.failure_count - r.failures.size()) +
                        " more failure lines");
  }
}

/// The shim said its hooks are not in place.
void decide_shim_failure(LlamaLogReport& r) {
  const ShimFailure& failure = *r.shim_failure;
  r.verdict = LlamaLogVerdict::shim_inactive;
  r.reasons.push_back("line " + std::to_string(failure.line) + " '" + failure.text +
                      "': the shim says its hooks " + "are not in place" +
                      (failure.process.empty() ? "" : " in " + failure.process) +
                      (failure.reason.empty() ? "" : " (" + failure.reason + ")") +
                      ", so llama.cpp saw the stock device");
}

/// No capability block, but the shim's success line: its hooks are in place.
void decide_shim_enabled(LlamaLogReport& r) {
  r.verdict = LlamaLogVerdict::shim_enabled;
  r.reasons.push_back(
      "line " + std::to_string(r.shim->line) + ": the shim reports its hooks in place in " +
      (r.shim->process.empty() ? std::string("this process") : r.shim->process) +
      ", but llama.cpp's verbosity hid ggml's capability block (llama-server prints it at no log "
      "level since llama.cpp PR #23021); 'lume-unlock bench' runs llama-bench, which prints it");
}

/// Which run was read, when the file holds more than one.
void describe_run(LlamaLogReport& r) {
  if (r.run.earlier_runs == 0) {
    return;
  }
  r.reasons.push_back("read the last run in the file, from line " +
                      std::to_string(r.run.first_line) +
                      (r.run.process ? " (" + *r.run.process + ")" : std::string()) + "; " +
                      util::plural(r.run.earlier_runs, "earlier run") +
                      " (restarts appended to the same log) not read");
}

/// The verdict of the run read (reference/metal-capabilities.md §4.2 for the capability part).
void decide_for_run(LlamaLogReport& r, const LlamaLogOptions& options, bool saw_metal_init) {
  auto& reasons = r.reasons;
  if (r.failure_count > 0) {
    decide_broken(r);
    return;
  }
  if (r.shim_failure) {
    decide_shim_failure(r);
    return;
  }
  const bool broad_shim = r.shim && r.shim->kind == ShimKind::cua_broad;
  if (!saw_metal_init && broad_shim) {
    // The broad build is unsafe whatever the process is: MLX logs no Metal init lines, only its
    // residency-set failure.
    r.verdict = LlamaLogVerdict::unsafe_profile;
    reasons.push_back(k_broad_reason);
    return;
  }
  if (!saw_metal_init && r.shim) {
    decide_shim_enabled(r);
    return;
  }
  if (!saw_metal_init) {
    r.verdict = LlamaLogVerdict::no_metal_log;
    reasons.push_back("the log has no llama.cpp Metal init lines (ggml_metal_…: GPU name, GPU "
                      "family, simdgroup …)");
    return;
  }
  const bool paravirtual = r.gpu_name && r.gpu_name->find(k_paravirtual) != std::string::npos;
  // When a flag line is missing, llama.cpp's own rule gives it from the family lines.
  const bool reduction = r.simdgroup_reduction.value_or(r.apple_family.value_or(0) >= k_apple7 ||
                                                        r.metal_family.value_or(0) >= k_metal3);
  const bool matrix = r.simdgroup_matrix.value_or(r.apple_family.value_or(0) >= k_apple7);

  const std::vector<std::string> unsafe = unsafe_reasons(r, broad_shim, paravirtual);
  if (!unsafe.empty()) {
    r.verdict = LlamaLogVerdict::unsafe_profile;
    reasons.insert(reasons.end(), unsafe.begin(), unsafe.end());
    return;
  }

  if (!reduction) {
    decide_without_reduction(r, options);
    return;
  }
  if (!matrix) {
    r.verdict = LlamaLogVerdict::partial;
    reasons.push_back(
        "SIMD-group reduction is on but matrix multiply is off (Metal3 without Apple7): no "
        "matrix-matrix kernels and no flash attention");
    return;
  }
  r.verdict = LlamaLogVerdict::fast;
  reasons.push_back(
      "SIMD-group reduction and matrix multiply are on: llama.cpp's fast Metal paths run");
  attribute_fast(r, paravirtual);
}

} // namespace

void decide_llama_log_verdict(LlamaLogReport& r,
                              const LlamaLogOptions& options,
                              bool saw_metal_init) {
  decide_for_run(r, options, saw_metal_init);
  describe_run(r);
}

} // namespace lume_unlock::verify

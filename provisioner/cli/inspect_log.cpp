#include "cli/commands.hpp"
#include "util/atomic_file.hpp"
#include "util/text_check.hpp"
#include "verify/llama_log.hpp"

#include <memory>
#include <sstream>

namespace lume_unlock::cli {

namespace {

struct InspectLogOptions {
  std::string file;
  bool expect_shim = false;
};

template <class T>
std::string or_absent(const std::optional<T>& value) {
  if (!value) {
    return "(not in the log)";
  }
  std::ostringstream text;
  text << std::boolalpha << *value;
  return text.str();
}

std::string describe_shim(const verify::ShimActivation& shim) {
  auto number = [](const std::optional<long long>& value) {
    return value ? std::to_string(*value) : "?";
  };
  std::string text;
  switch (shim.kind) {
  case verify::ShimKind::lume_unlock:
    text = "lume-unlock shim";
    break;
  case verify::ShimKind::cua:
    text = "Cua shim (LumeMetalCapabilities)";
    break;
  case verify::ShimKind::cua_broad:
    text = "Cua broad research build (LumeMetalCapabilities)";
    break;
  }
  text += " enabled for " +
          (shim.process.empty() ? std::string("?") : util::display_text(shim.process)) + " (";
  if (shim.kind == verify::ShimKind::cua_broad) {
    text +=
        "familyMax=" + number(shim.family_max) + ", featureProfile=" + number(shim.feature_profile);
  } else {
    text += "appleFamilyMax=" + number(shim.apple_family_max);
  }
  return text + ", maxThreadgroupMemory=" + number(shim.max_threadgroup_memory) + ")";
}

/// The human rendering of a report: verdict and reasons first, then every field read.
std::string render_llama_log_report(const verify::LlamaLogReport& report) {
  std::ostringstream out;
  out << "verdict: " << verify::verdict_name(report.verdict) << '\n';
  for (const auto& reason : report.reasons) {
    out << "  " << util::display_text(reason) << '\n';
  }
  if (report.verdict != verify::LlamaLogVerdict::no_metal_log &&
      report.verdict != verify::LlamaLogVerdict::shim_enabled) {
    out << "GPU name:             " << report.gpu_name.value_or("(not in the log)") << '\n'
        << "Apple family:         " << or_absent(report.apple_family) << '\n'
        << "Common family:        " << or_absent(report.common_family) << '\n'
        << "Metal family:         "
        << (report.metal_family ? std::to_string(*report.metal_family) : "(none)") << '\n'
        << "simdgroup reduction:  " << or_absent(report.simdgroup_reduction) << '\n'
        << "simdgroup matrix:     " << or_absent(report.simdgroup_matrix) << '\n'
        << "bfloat:               " << or_absent(report.bfloat) << '\n'
        << "tensor:               " << or_absent(report.tensor) << '\n'
        << "residency sets:       " << or_absent(report.residency_sets) << '\n';
  }
  out << "shim:                 "
      << (report.shim ? describe_shim(*report.shim) : "(no activation line)") << '\n';
  return out.str();
}

int run_inspect_log(const InspectLogOptions& options, Context& context) {
  auto text = util::read_input_file(options.file, verify::k_max_llama_log_bytes, "the log");
  if (!text) {
    throw Error(ErrorCategory::usage,
                "cannot inspect log",
                text.error().message(),
                "capture llama.cpp's stderr into a file (2> llama.stderr) and pass its path");
  }
  verify::check_llama_log_lines(text.value()).value_or_throw();
  verify::LlamaLogOptions classify;
  classify.expect_shim = options.expect_shim;
  auto report = verify::classify_llama_log(text.value(), classify);
  if (context.json()) {
    context.print_json(verify::to_json(report));
  } else {
    context.out << render_llama_log_report(report);
  }
  // A report, except when Metal itself failed: that run's results cannot be used.
  return report.verdict == verify::LlamaLogVerdict::broken ? exit_code(ErrorCategory::verification)
                                                           : 0;
}

} // namespace

void register_inspect_log(CLI::App& app, Context& context) {
  auto options = std::make_shared<InspectLogOptions>();
  auto* command =
      app.add_subcommand("inspect-log",
                         "Classify the last run in llama.cpp's Metal log: fast, partial, "
                         "stock, unsafe-profile, shim-inactive, shim-enabled, "
                         "no-metal-log or broken (exit 6)");
  command->add_option("FILE", options->file, "llama.cpp stderr captured to a file")->required();
  command->add_flag(
      "--expect-shim",
      options->expect_shim,
      "The shim was injected: no shim line with stock answers means shim-inactive, not stock");
  command->footer(
      "A log that several runs appended to (a keep_alive agent's restarts) is judged by its last\n"
      "run: a shim line, or a capability block after one, starts a run.\n"
      "Exit status 6 for 'broken' (ggml-metal reported a failed command buffer, residency set or\n"
      "library), 0 for every other verdict (this is a report), 2 when FILE cannot be read.\n"
      "Example: llama-bench -m model.gguf 2> llama.stderr; lume-unlock inspect-log llama.stderr "
      "--expect-shim");
  command->callback(
      [options, &context] { context.exit_status = run_inspect_log(*options, context); });
}

} // namespace lume_unlock::cli

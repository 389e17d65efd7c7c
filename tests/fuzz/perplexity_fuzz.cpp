// libFuzzer target: the llama-perplexity output reader and the drift parser of `bench`. Any bytes
// must give figures or nothing, never a crash, a hang or a sanitizer report; every figure read is
// finite and positive, and a run compared with itself has no drift and passes the gate.
#include "fuzz_check.hpp"
#include "verify/bench.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lume_unlock;
  using lume_unlock::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto run = verify::parse_llama_perplexity(text, text);
  for (const double value : run.chunks) {
    check(std::isfinite(value) && value > 0);
  }
  check(!run.estimate || (std::isfinite(*run.estimate) && *run.estimate > 0));
  verify::PerplexityComparison self;
  self.stock = run;
  self.unlocked = run;
  const auto failures = verify::gate_perplexity(self);
  check(run.estimate ? failures.empty() && verify::perplexity_drift(run, run) == 0.0
                     : failures.size() == 2);
  (void)verify::to_json(self).dump();
  (void)verify::perplexity_phrase(verify::to_json(self));
  auto drift = verify::parse_perplexity_drift(text, "fuzz");
  check(!drift.ok() || (drift.value() > 0 && drift.value() <= 1));
  return 0;
}

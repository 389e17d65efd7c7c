// libFuzzer target: the llama-bench JSON parser and the threshold parsers of `bench`. Any bytes
// must give a value or an Error, never a crash, a hang or a sanitizer report; accepted tests
// must compare with themselves as a speedup of exactly 1 and render.
#include "fuzz_check.hpp"
#include "verify/bench.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lume_unlock;
  using lume_unlock::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = verify::parse_llama_bench_json(text, "fuzz");
  if (parsed.ok()) {
    check(!parsed.value().empty());
    for (const auto& test : parsed.value()) {
      check(test.n_prompt >= 0 && test.n_gen >= 0 && test.avg_ts >= 0 && test.stddev_ts >= 0);
      check(!test.name().empty());
    }
    auto rows = verify::compare_bench(parsed.value(), parsed.value(), parsed.value());
    if (rows.ok()) {
      for (const auto& row : rows.value()) {
        check(row.speedup == 1.0);
        (void)verify::to_json(row).dump();
      }
      (void)verify::render_bench_table(rows.value());
    }
  } else {
    check(!parsed.error().message().empty());
  }
  auto ratios = verify::parse_min_host_ratio(text, "fuzz");
  if (ratios.ok()) {
    // What format_host_ratio prints reads back as the same kinds.
    auto again = verify::parse_min_host_ratio(verify::format_host_ratio(ratios.value()), "fuzz");
    check(again.ok() && again.value().size() == ratios.value().size());
  }
  (void)verify::parse_min_speedup(text, "fuzz");
  return 0;
}

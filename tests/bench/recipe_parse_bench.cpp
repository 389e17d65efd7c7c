// Recipe parsing time against the number of enablement entries (issue 15: parsing was quadratic,
// 8k entries 0.64 s, 32k 5.6 s). Run by hand for figures:
//   build/tests/bench/recipe_parse_bench
// Linear parsing shows as a time per entry that stays flat from 8k to 200k entries.
#include "recipe/recipe.hpp"

#include <benchmark/benchmark.h>

#include <string>

namespace {

using namespace lume_unlock;

/// A valid recipe with `entries` enablement entries, each with a distinct name and arguments.
std::string recipe_with_entries(std::int64_t entries) {
  std::string text = "source:\n  image: ghcr.io/trycua/macos-tahoe-cua:latest\n"
                     "vm:\n  cpu: 8\n  memory: 16GB\nenablement:\n";
  for (std::int64_t i = 0; i < entries; ++i) {
    const std::string n = std::to_string(i);
    text += "  - name: app-" + n + "\n    program: /opt/app/bin/app-" + n +
            "\n    args: [\"--port\", \"" + n + "\"]\n    agent: false\n";
  }
  return text;
}

void BM_ParseRecipe(benchmark::State& state) {
  const std::string text = recipe_with_entries(state.range(0));
  for (auto _ : state) {
    auto recipe = recipe::parse_recipe(text, "bench.yaml");
    if (!recipe.ok() ||
        recipe.value().enablement.entries.size() != static_cast<std::size_t>(state.range(0))) {
      state.SkipWithError("the generated recipe did not parse");
      return;
    }
    benchmark::DoNotOptimize(recipe);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_ParseRecipe)
    ->Arg(8000)
    ->Arg(16000)
    ->Arg(32000)
    ->Arg(200000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

} // namespace

BENCHMARK_MAIN();

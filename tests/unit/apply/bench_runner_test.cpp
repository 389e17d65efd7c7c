// The words a bench sends to the guest's llama-bench, for the shipped recipes: the published
// command (docs/sources.md, "The published run"), with the recipe's model.
#include "apply/llama_runs.hpp"
#include "recipe/recipe.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::apply {
namespace {

std::string command_of(const std::string& recipe_file) {
  auto recipe =
      recipe::load_recipe(std::string(LUME_UNLOCK_SOURCE_DIR) + "/image-recipes/" + recipe_file);
  EXPECT_TRUE(recipe.ok()) << (recipe.ok() ? "" : recipe.error().message());
  if (!recipe.ok() || !recipe.value().bench) {
    return {};
  }
  std::string command = "llama-bench";
  for (const std::string& word : llama_bench_arguments(recipe.value().bench->request)) {
    command += " " + word;
  }
  return command;
}

TEST(BenchRunner, TheShippedRecipesRunThePublishedCommand) {
  EXPECT_EQ(command_of("tahoe-llm.yaml"),
            "llama-bench -m /Users/lume/models/tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf "
            "-p 512 -n 128 -r 10 -t 8 -ngl -1 -o json");
  EXPECT_EQ(command_of("gemma4-12b.yaml"),
            "llama-bench -m /Users/lume/models/gemma-4-12b-it-qat-q4_0.gguf "
            "-p 512 -n 128 -r 10 -t 8 -ngl -1 -o json");
}

TEST(BenchRunner, ThreadsAndGpuLayersArePassedOnlyWhenSet) {
  verify::BenchRequest request;
  request.model = "/m/q.gguf";
  EXPECT_EQ(llama_bench_arguments(request),
            (std::vector<std::string>{
                "-m", "/m/q.gguf", "-p", "512", "-n", "128", "-r", "3", "-o", "json"}));
}

} // namespace
} // namespace lume_unlock::apply

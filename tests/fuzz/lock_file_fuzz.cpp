// libFuzzer target: a recipe lock file (JSON). Any bytes must give a value or an Error, never a
// crash, a hang or a sanitizer report; accepted values must survive the round trips checked below.
#include "fuzz_check.hpp"
#include "recipe/recipe.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lume_unlock;
  using lume_unlock::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto lock = recipe::parse_lock_file(text, "fuzz.lock.json");
  if (lock.ok()) {
    // What was accepted is written back as a lock that reads the same.
    auto again = recipe::parse_lock_file(recipe::to_json(lock.value()).dump(), "again");
    check(again.ok() && again.value() == lock.value());
  }
  return 0;
}

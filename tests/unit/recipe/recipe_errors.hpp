#pragma once
// What parse_recipe says when it refuses a recipe, for the recipe tests' message checks.
#include "recipe/recipe.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lume_unlock::recipe {

/// The refusal's message and hint ("message | hint: hint"); a failure when `text` is accepted.
inline std::string error_of(const std::string& text) {
  auto r = parse_recipe(text, "r.yaml");
  EXPECT_FALSE(r.ok()) << "accepted:\n" << text;
  return r.ok() ? std::string()
                : r.error().message() +
                      (r.error().hint().empty() ? "" : " | hint: " + r.error().hint());
}

} // namespace lume_unlock::recipe

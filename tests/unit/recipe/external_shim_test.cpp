// shim: {dylib: PATH, sha256: HEX}: an externally built shim (e.g. Cua's certified build) named
// by a host path and its digest, refused unless the file's bytes have that digest.
#include "recipe/recipe.hpp"
#include "recipe_errors.hpp"
#include "support/file_io.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace lume_unlock::recipe {
namespace {

const std::string k_digest(64, 'a');

std::string recipe_with(const std::string& shim) {
  return "source: {image: a.io/b/c:1}\nshim: " + shim + "\n";
}

TEST(RecipeExternalShim, DylibAndDigestAreReadTogether) {
  auto r = parse_recipe(recipe_with("{dylib: dist/LumeMetalCapabilities-arm64.dylib, sha256: " +
                                    k_digest + ", profile: {apple_family_max: 1009}}"),
                        "r.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_TRUE(r.value().shim.external.has_value());
  EXPECT_EQ(r.value().shim.external->dylib, "dist/LumeMetalCapabilities-arm64.dylib");
  EXPECT_EQ(r.value().shim.external->sha256, k_digest);
  EXPECT_FALSE(r.value().shim.bundle.has_value());
  EXPECT_FALSE(parse_recipe(recipe_with("{profile: {apple_family_max: 1009}}"), "r.yaml")
                   .value()
                   .shim.external.has_value());
}

TEST(RecipeExternalShim, UpperCaseHexIsKeptInLowerCase) {
  auto r = parse_recipe(recipe_with("{dylib: /opt/shim.dylib, sha256: " + std::string(32, 'A') +
                                    std::string(32, '0') + "}"),
                        "r.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r.value().shim.external->sha256, std::string(32, 'a') + std::string(32, '0'));
}

TEST(RecipeExternalShim, BadFieldsNameTheRule) {
  EXPECT_EQ(error_of(recipe_with("{dylib: /opt/shim.dylib}")),
            "r.yaml:2:7: shim: has 'dylib' without 'sha256' | hint: name an externally built "
            "shim with both: shim: {dylib: PATH, sha256: <64 hex>}");
  EXPECT_EQ(error_of(recipe_with("{sha256: " + k_digest + "}")),
            "r.yaml:2:7: shim: has 'sha256' without 'dylib' | hint: name an externally built "
            "shim with both: shim: {dylib: PATH, sha256: <64 hex>}");
  EXPECT_EQ(error_of(recipe_with("{dylib: /opt/shim.dylib, sha256: abc}")),
            "r.yaml:2:40: shim.sha256: 'abc' is not a SHA-256 (64 hex digits) | hint: write the "
            "dylib's digest as 'shasum -a 256 FILE' prints it, without 'sha256:'");
  EXPECT_NE(error_of(recipe_with("{dylib: /opt/shim.dylib, sha256: 'sha256:" + k_digest + "'}"))
                .find("is not a SHA-256 (64 hex digits)"),
            std::string::npos);
  EXPECT_NE(error_of(recipe_with("{dylib: /opt/shim.dylib, sha256: " + std::string(63, 'a') + "g}"))
                .find("is not a SHA-256"),
            std::string::npos);
  EXPECT_EQ(error_of(recipe_with("{dylib: '/opt/my shim.dylib', sha256: " + k_digest + "}")),
            "r.yaml:2:15: shim.dylib: the file name 'my shim.dylib' must be letters, digits, '.', "
            "'_', '+' or '-' | hint: it becomes the file's name in the guest; rename the file, "
            "e.g. LumeMetalCapabilities-arm64.dylib");
  EXPECT_NE(error_of(recipe_with("{dylib: /opt/, sha256: " + k_digest + "}"))
                .find("shim.dylib: the file name '' must be"),
            std::string::npos);
}

TEST(RecipeExternalShim, TheFileIsReadRelativeToTheRecipeAndItsDigestChecked) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "dist");
  test::write_file(dir / "dist/shim.dylib", "the dylib's bytes");
  const std::string right = util::sha256_hex("the dylib's bytes");
  test::write_file(dir / "r.yaml", recipe_with("{dylib: dist/shim.dylib, sha256: " + right + "}"));
  auto verified = verified_external_shim(load_recipe(dir / "r.yaml").value());
  ASSERT_TRUE(verified.ok()) << verified.error().message();
  ASSERT_TRUE(verified.value().has_value());
  EXPECT_EQ(verified.value()->path, dir / "dist/shim.dylib");
  EXPECT_EQ(verified.value()->sha256, right);

  // An absolute path is taken as written.
  test::write_file(
      dir / "r.yaml",
      recipe_with("{dylib: " + (dir / "dist/shim.dylib") + ", sha256: " + right + "}"));
  EXPECT_EQ(verified_external_shim(load_recipe(dir / "r.yaml").value()).value()->path,
            dir / "dist/shim.dylib");

  // Other bytes: refused, both digests named.
  test::write_file(dir / "r.yaml",
                   recipe_with("{dylib: dist/shim.dylib, sha256: " + k_digest + "}"));
  auto wrong = verified_external_shim(load_recipe(dir / "r.yaml").value());
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().category(), ErrorCategory::verification);
  EXPECT_EQ(wrong.error().message(),
            "recipe '" + (dir / "r.yaml") + "' field 'shim.dylib': '" + (dir / "dist/shim.dylib") +
                "' has SHA-256 " + right + ", the recipe's shim.sha256 is " + k_digest);

  // No file: a usage error naming the path.
  test::write_file(dir / "r.yaml", recipe_with("{dylib: dist/gone.dylib, sha256: " + right + "}"));
  auto missing = verified_external_shim(load_recipe(dir / "r.yaml").value());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().category(), ErrorCategory::usage);
  EXPECT_NE(missing.error().message().find("'" + (dir / "dist/gone.dylib") + "' cannot be read"),
            std::string::npos)
      << missing.error().message();

  EXPECT_FALSE(verified_external_shim(parse_recipe(recipe_with("{}"), "r.yaml").value())
                   .value()
                   .has_value());
}

} // namespace
} // namespace lume_unlock::recipe

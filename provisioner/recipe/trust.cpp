#include "recipe/trust.hpp"

#include "util/ecdsa_key.hpp"

#include <filesystem>

namespace lume_unlock::recipe {

Result<std::vector<signing::TrustedKey>> load_trusted_keys(const Recipe& recipe) {
  std::vector<signing::TrustedKey> keys;
  const std::filesystem::path directory = std::filesystem::path(recipe.path).parent_path();
  for (std::size_t i = 0; i < recipe.trust.keys.size(); ++i) {
    const std::string& entry = recipe.trust.keys[i];
    const std::string where =
        i < recipe.trust.key_sources.size() ? recipe.trust.key_sources[i] : recipe.path;
    const std::string field = where + ": trust.keys[" + std::to_string(i) + "]";
    if (entry.find("-----BEGIN") != std::string::npos) {
      auto key = util::EcdsaPublicKey::from_pem(entry, field + " (inline)");
      if (!key) {
        // Led by file:line:col like every other recipe error.
        return Error(
            ErrorCategory::usage, field + " (inline)", key.error().why(), key.error().hint());
      }
      keys.push_back({key.value(), "trust.keys[" + std::to_string(i) + "] (inline)"});
      continue;
    }
    const std::string path = (directory / entry).lexically_normal().string();
    auto key = util::read_public_key_file(path);
    if (!key) {
      // A key the recipe names but that cannot be read is the recipe's fault: bad input.
      return Error(ErrorCategory::usage,
                   field,
                   key.error().message(),
                   "write the path relative to the recipe's directory, or paste the PEM inline");
    }
    keys.push_back({key.value(), path});
  }
  return keys;
}

} // namespace lume_unlock::recipe

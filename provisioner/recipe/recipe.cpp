#include "recipe/recipe.hpp"

#include "recipe_sections.hpp"
#include "util/atomic_file.hpp"
#include "util/ecdsa_key.hpp"
#include "util/json_reader.hpp"
#include "util/sha256.hpp"
#include "util/size.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <filesystem>
#include <string_view>

namespace lume_unlock::recipe {

Result<std::uint64_t> parse_vm_size(std::string_view text, std::uint64_t ceiling) {
  const std::string quoted = "'" + std::string(text) + "'";
  auto fail = [&](const std::string& why,
                  const std::string& hint =
                      "write it like 16GB or 8192MB (units: TB, GB, MB, KB, B)") -> Error {
    return Error(ErrorCategory::usage, "invalid size " + quoted, why, hint);
  };
  if (text.find_first_not_of("0123456789. ") == std::string_view::npos) {
    return fail(quoted + " has no unit");
  }
  auto bytes = util::parse_size(text);
  if (!bytes) {
    return fail(quoted + ": " + bytes.error().why());
  }
  if (bytes.value() == 0) {
    return fail(quoted + " is zero");
  }
  if (bytes.value() > ceiling) {
    return fail(quoted + " (" + std::to_string(bytes.value()) +
                    " bytes) is more than the ceiling of " + util::format_size(ceiling),
                "no Mac can back it; at most " + util::format_size(ceiling));
  }
  return bytes.value();
}

Result<Recipe> parse_recipe(std::string_view text, const std::string& source_name) {
  const YamlReader p(source_name);
  return p.run([&] {
    Recipe recipe;
    recipe.sha256 = util::sha256_hex(text);
    const YAML::Node root =
        p.document(text, "the recipe", "see image-recipes/README.md for the fields");
    const auto section = [&](auto parse_section) {
      return [&, parse_section](const YAML::Node& n, const std::string& f) {
        parse_section(p, n, f, recipe);
      };
    };
    BenchNodes bench_nodes;
    p.mapping(root,
              "",
              {
                  {"source", section(parse_source_section)},
                  {"vm", section(parse_vm_section)},
                  {"guest", section(parse_guest_section)},
                  {"shim", section(parse_shim_section)},
                  {"trust", section(parse_trust_section)},
                  {"registry", section(parse_registry_section)},
                  {"bench",
                   [&](const YAML::Node& n, const std::string& f) {
                     parse_bench_section(p, n, f, recipe, bench_nodes);
                   }},
                  {"install", section(parse_install_section)},
                  {"enablement",
                   [&](const YAML::Node& n, const std::string& f) {
                     recipe.enablement = enablement::read_enablement(p, n, f);
                   }},
              });
    check_bench_entry(p, recipe, bench_nodes);
    if (!recipe.source.image && !recipe.source.ipsw) {
      throw util::YamlError{Error(ErrorCategory::usage,
                                  source_name + ": source",
                                  "is required",
                                  "add 'source: {image: ghcr.io/trycua/macos-tahoe-cua:latest}'")};
    }
    return recipe;
  });
}

Result<Recipe> load_recipe(const std::string& path) {
  auto text = util::read_input_file(path, k_max_recipe_bytes, "the recipe");
  if (!text) {
    return Error(ErrorCategory::usage,
                 "cannot read recipe '" + path + "'",
                 text.error().why(),
                 "pass an existing file, e.g. --recipe image-recipes/tahoe-llm.yaml");
  }
  auto recipe = parse_recipe(text.value(), path);
  if (recipe) {
    recipe.value().path = path;
  }
  return recipe;
}

namespace {

/// A path written in the recipe, as seen from the working directory: relative paths are
/// relative to the recipe's directory, so a recipe works from wherever it is run.
std::string relative_to_recipe(const Recipe& recipe, const std::string& written) {
  const std::filesystem::path path(written);
  return path.is_absolute() ? written
                            : (std::filesystem::path(recipe.path).parent_path() / path)
                                  .lexically_normal()
                                  .string();
}

/// A file the recipe names in `field`, relative to the recipe, when set; a usage error when it is
/// not a file.
Result<std::optional<std::string>> recipe_file(const Recipe& recipe,
                                               const std::optional<std::string>& value,
                                               const std::string& field,
                                               const std::string& what) {
  if (!value) {
    return std::optional<std::string>();
  }
  const std::string path = relative_to_recipe(recipe, *value);
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(path, ignored)) {
    return Error(ErrorCategory::usage,
                 "recipe '" + recipe.path + "' field '" + field + "'",
                 "'" + path + "' is not a file",
                 "write the path of " + what);
  }
  return std::optional<std::string>(path);
}

} // namespace

Result<std::optional<std::string>> bench_host_json_file(const Recipe& recipe) {
  return recipe_file(recipe,
                     recipe.bench ? recipe.bench->host_json : std::nullopt,
                     "bench.host_json",
                     "the host's 'llama-bench -o json' output relative to the recipe's directory");
}

Result<std::optional<std::string>> bench_host_perplexity_file(const Recipe& recipe) {
  return recipe_file(
      recipe,
      recipe.bench ? recipe.bench->host_perplexity : std::nullopt,
      "bench.host_perplexity",
      "the host's llama-perplexity output (2>&1) relative to the recipe's directory");
}

Result<std::optional<std::string>> registry_ca_file(const Recipe& recipe) {
  return recipe_file(recipe,
                     recipe.registry.ca,
                     "registry.ca",
                     "the registry's CA certificate (PEM) relative to the recipe's directory, or "
                     "give it with --registry-ca FILE");
}

Result<std::optional<VerifiedExternalShim>> verified_external_shim(const Recipe& recipe) {
  if (!recipe.shim.external) {
    return std::optional<VerifiedExternalShim>();
  }
  const std::string what = "recipe '" + recipe.path + "' field 'shim.dylib'";
  const std::string path = relative_to_recipe(recipe, recipe.shim.external->dylib);
  std::error_code ignored;
  auto found = std::filesystem::is_regular_file(path, ignored)
                   ? util::sha256_file_hex(path)
                   : Result<std::string>(Error(ErrorCategory::usage, what, "not a file"));
  if (!found) {
    return Error(ErrorCategory::usage,
                 what,
                 "'" + path + "' cannot be read: " + found.error().why(),
                 "write the path of the dylib (e.g. upstream's "
                 "dist/LumeMetalCapabilities-arm64.dylib) relative to the recipe's directory");
  }
  const std::string& expected = recipe.shim.external->sha256;
  if (found.value() != expected) {
    return Error(ErrorCategory::verification,
                 what,
                 "'" + path + "' has SHA-256 " + found.value() + ", the recipe's shim.sha256 is " +
                     expected,
                 "nothing was installed; check that the file is the build you meant (shasum -a "
                 "256 FILE; docs/sources.md lists the certified upstream digests)");
  }
  return std::optional<VerifiedExternalShim>(VerifiedExternalShim{path, expected});
}

Result<std::vector<signing::TrustedKey>> load_trusted_keys(const Recipe& recipe) {
  std::vector<signing::TrustedKey> keys;
  for (std::size_t i = 0; i < recipe.trust.keys.size(); ++i) {
    const std::string& entry = recipe.trust.keys[i];
    const std::string name = "trust.keys[" + std::to_string(i) + "]";
    // Led by file:line:col like every other recipe error.
    const std::string field =
        (i < recipe.trust.key_sources.size() ? recipe.trust.key_sources[i] : recipe.path) + ": " +
        name;
    if (entry.find("-----BEGIN") != std::string::npos) {
      auto key = util::EcdsaPublicKey::from_pem(entry, field + " (inline)");
      if (!key) {
        return Error(
            ErrorCategory::usage, field + " (inline)", key.error().why(), key.error().hint());
      }
      keys.push_back({key.value(), name + " (inline)"});
      continue;
    }
    const std::string path = relative_to_recipe(recipe, entry);
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

std::string InstallItem::label() const {
  return util::base_name(dest);
}

fetch::ArtifactSource install_source(const Recipe& recipe, const InstallItem& item) {
  return item.source.kind == fetch::ArtifactSource::Kind::file
             ? fetch::file_source(relative_to_recipe(recipe, item.source.text))
             : item.source;
}

std::string guest_path_of(const InstallItem& item, const std::string& relative) {
  return relative.empty() ? item.dest : item.dest + "/" + relative;
}

namespace {

using util::JsonObject;
using util::JsonValue;

std::string non_empty(const JsonObject& object, const char* key) {
  const JsonValue value = object.at(key, "a non-empty string");
  if (value.string().empty()) {
    value.fail("expected a non-empty string, got ''");
  }
  return value.string();
}

/// `key`'s value when it passes `check`, else the failure "expected <what>, got '<value>'".
std::string checked(const JsonObject& object,
                    const char* key,
                    bool (*check)(const std::string&),
                    const char* what) {
  const JsonValue value = object.at(key, "a string");
  if (!check(value.string())) {
    value.fail(std::string("expected ") + what + ", got " +
               util::quote_for_message(value.string()));
  }
  return value.string();
}

bool is_digest(const std::string& digest) {
  return util::starts_with(digest, "sha256:") && util::is_sha256_hex(digest.substr(7));
}

bool is_hex(const std::string& text) {
  return util::is_sha256_hex(text);
}

constexpr const char* k_digest = "'sha256:' and 64 lower-case hex characters";
constexpr const char* k_hex = "64 lower-case hex characters";

/// A string the file may hold or not; another type is ignored, as older readers did.
std::optional<std::string> lenient_string(const JsonObject& object, const char* key) {
  const auto value = object.find(key);
  return value && value->json().is_string() ? std::optional<std::string>(value->string())
                                            : std::nullopt;
}

/// One entry of `references`: a recipe field's reference pinned to a digest.
LockedReference read_reference(const JsonObject& entry) {
  LockedReference r{non_empty(entry, "field"),
                    non_empty(entry, "reference"),
                    checked(entry, "digest", is_digest, k_digest),
                    non_empty(entry, "pinned"),
                    lenient_string(entry, "media_type"),
                    std::nullopt};
  if (entry.has("signed_by")) {
    r.signed_by = checked(entry, "signed_by", is_digest, k_digest);
  }
  return r;
}

/// One entry of `artifacts`: an install item's source pinned to its SHA-256 and size.
LockedArtifact read_artifact(const JsonObject& entry) {
  return LockedArtifact{non_empty(entry, "field"),
                        non_empty(entry, "source"),
                        checked(entry, "sha256", is_hex, k_hex),
                        entry.unsigned_integer("size")};
}

BakedImage read_baked(const JsonObject& entry) {
  BakedImage baked;
  baked.reference = non_empty(entry, "reference");
  baked.digest = checked(entry, "digest", is_digest, k_digest);
  baked.pinned = non_empty(entry, "pinned");
  baked.pushed_at = non_empty(entry, "pushed_at");
  baked.recipe_sha256 = checked(entry, "recipe_sha256", is_hex, k_hex);
  for (const JsonValue& file : entry.array("shim_files")) {
    baked.shim_files.push_back(
        {non_empty(file.object(), "path"), checked(file.object(), "sha256", is_hex, k_hex)});
  }
  if (entry.has("signed_by")) {
    baked.signed_by = checked(entry, "signed_by", is_digest, k_digest);
  }
  return baked;
}

LockFile read_lock(const JsonValue& value) {
  const JsonObject document = value.object();
  const JsonValue schema = document.at("schema", "a string");
  if (schema.string() != k_lock_schema) {
    schema.fail("expected '" + std::string(k_lock_schema) + "', got " +
                util::quote_for_message(schema.string()));
  }
  LockFile lock;
  const JsonObject recipe = document.object("recipe");
  lock.recipe_path = non_empty(recipe, "path");
  lock.recipe_sha256 = checked(recipe, "sha256", is_hex, k_hex);
  for (const JsonValue& entry : document.at("references", "an array").array()) {
    lock.references.push_back(read_reference(entry.object()));
  }
  if (const auto artifacts = document.find("artifacts")) {
    for (const JsonValue& entry : artifacts->array()) {
      lock.artifacts.push_back(read_artifact(entry.object()));
    }
  }
  if (const auto baked = document.find("baked")) {
    for (const JsonValue& entry : baked->array()) {
      lock.baked.push_back(read_baked(entry.object()));
    }
  }
  lock.created_at = lenient_string(document, "created_at");
  return lock;
}

} // namespace

nlohmann::json to_json(const BakedImage& baked) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : baked.shim_files) {
    files.push_back({{"path", f.path}, {"sha256", f.sha256}});
  }
  nlohmann::json out = {{"reference", baked.reference},
                        {"digest", baked.digest},
                        {"pinned", baked.pinned},
                        {"pushed_at", baked.pushed_at},
                        {"recipe_sha256", baked.recipe_sha256},
                        {"shim_files", files}};
  if (baked.signed_by) {
    out["signed_by"] = *baked.signed_by;
  }
  return out;
}

const LockedReference* LockFile::find(const std::string& field) const {
  for (const auto& r : references) {
    if (r.field == field) {
      return &r;
    }
  }
  return nullptr;
}

const LockedArtifact* LockFile::find_artifact(const std::string& field) const {
  for (const auto& a : artifacts) {
    if (a.field == field) {
      return &a;
    }
  }
  return nullptr;
}

bool LockFile::matches_recipe(std::string_view recipe_bytes) const {
  return util::sha256_hex(recipe_bytes) == recipe_sha256;
}

nlohmann::json to_json(const LockFile& lock) {
  nlohmann::json out = {{"schema", k_lock_schema},
                        {"recipe", {{"path", lock.recipe_path}, {"sha256", lock.recipe_sha256}}},
                        {"references", nlohmann::json::array()}};
  for (const auto& r : lock.references) {
    nlohmann::json entry = {
        {"field", r.field}, {"reference", r.reference}, {"digest", r.digest}, {"pinned", r.pinned}};
    if (r.media_type) {
      entry["media_type"] = *r.media_type;
    }
    if (r.signed_by) {
      entry["signed_by"] = *r.signed_by;
    }
    out["references"].push_back(entry);
  }
  if (!lock.artifacts.empty()) {
    out["artifacts"] = nlohmann::json::array();
    for (const auto& a : lock.artifacts) {
      out["artifacts"].push_back(
          {{"field", a.field}, {"source", a.source}, {"sha256", a.sha256}, {"size", a.size}});
    }
  }
  if (!lock.baked.empty()) {
    out["baked"] = nlohmann::json::array();
    for (const auto& b : lock.baked) {
      out["baked"].push_back(to_json(b));
    }
  }
  if (lock.created_at) {
    out["created_at"] = *lock.created_at;
  }
  return out;
}

Result<LockFile> parse_lock_file(std::string_view text, const std::string& path) {
  return util::read_json_text(text,
                              {ErrorCategory::usage,
                               "invalid lock file '" + path + "'",
                               "recreate it with 'lume-unlock lock RECIPE'"},
                              read_lock);
}

Result<LockFile> load_lock_file(const std::string& path) {
  LUME_UNLOCK_TRY_ASSIGN(auto text,
                         util::read_input_file(path, k_max_lock_file_bytes, "the lock file"));
  return parse_lock_file(text, path);
}

std::string lock_path_for(const std::string& recipe_path) {
  const auto slash = recipe_path.rfind('/');
  const auto dot = recipe_path.rfind('.');
  const bool has_extension =
      dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  return (has_extension ? recipe_path.substr(0, dot) : recipe_path) + ".lock.json";
}

Status write_lock_file(const std::string& path, const LockFile& lock) {
  return util::write_file_atomic(path, to_json(lock).dump(2) + "\n");
}

} // namespace lume_unlock::recipe

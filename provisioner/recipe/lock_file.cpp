#include "recipe/recipe.hpp"
#include "util/atomic_file.hpp"
#include "util/json_reader.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

namespace lume_unlock::recipe {

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

#include "recipe/lock_file.hpp"

#include "util/atomic_file.hpp"
#include "util/json_parse.hpp"
#include "util/sha256.hpp"

namespace lume_unlock::recipe {

namespace {

Error invalid(const std::string& path, const std::string& why) {
  return Error(ErrorCategory::usage,
               "invalid lock file '" + path + "'",
               why,
               "recreate it with 'lume-unlock lock RECIPE'");
}

Result<std::string> required_string(const nlohmann::json& object,
                                    const char* key,
                                    const std::string& at,
                                    const std::string& path) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string() || it->get<std::string>().empty()) {
    return invalid(path, "'" + at + key + "' must be a non-empty string");
  }
  return it->get<std::string>();
}

bool is_digest(const std::string& digest) {
  return digest.rfind("sha256:", 0) == 0 && util::is_sha256_hex(digest.substr(7));
}

/// One entry of `references`: a recipe field's reference pinned to a digest.
Result<LockedReference> parse_locked_reference(const nlohmann::json& entry,
                                               const std::string& at,
                                               const std::string& path) {
  LockedReference r;
  for (auto [key, out] : {std::pair<const char*, std::string*>{"field", &r.field},
                          {"reference", &r.reference},
                          {"digest", &r.digest},
                          {"pinned", &r.pinned}}) {
    LUME_UNLOCK_TRY_ASSIGN(auto value, required_string(entry, key, at, path));
    *out = value;
  }
  if (!is_digest(r.digest)) {
    return invalid(path, "'" + at + "digest' must be 'sha256:' and 64 lower-case hex characters");
  }
  if (auto mt = entry.find("media_type"); mt != entry.end() && mt->is_string()) {
    r.media_type = mt->get<std::string>();
  }
  if (auto key = entry.find("signed_by"); key != entry.end()) {
    if (!key->is_string() || !is_digest(key->get<std::string>())) {
      return invalid(path, "'" + at + "signed_by' must be 'sha256:' and 64 lower-case hex");
    }
    r.signed_by = key->get<std::string>();
  }
  return r;
}

/// One entry of `artifacts`: an install item's source pinned to its SHA-256 and size.
Result<LockedArtifact>
parse_locked_artifact(const nlohmann::json& entry, const std::string& at, const std::string& path) {
  LockedArtifact a;
  for (auto [key, out] : {std::pair<const char*, std::string*>{"field", &a.field},
                          {"source", &a.source},
                          {"sha256", &a.sha256}}) {
    LUME_UNLOCK_TRY_ASSIGN(auto value, required_string(entry, key, at, path));
    *out = value;
  }
  if (!util::is_sha256_hex(a.sha256)) {
    return invalid(path, "'" + at + "sha256' must be 64 lower-case hex characters");
  }
  const auto size = entry.find("size");
  if (size == entry.end() || !size->is_number_unsigned()) {
    return invalid(path, "'" + at + "size' must be a whole number of bytes");
  }
  a.size = size->get<std::uint64_t>();
  return a;
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

Result<BakedImage>
parse_baked_image(const nlohmann::json& entry, const std::string& at, const std::string& path) {
  if (!entry.is_object()) {
    return invalid(path, "'" + at.substr(0, at.size() - 1) + "' must be an object");
  }
  BakedImage baked;
  for (auto [key, out] : {std::pair<const char*, std::string*>{"reference", &baked.reference},
                          {"digest", &baked.digest},
                          {"pinned", &baked.pinned},
                          {"pushed_at", &baked.pushed_at},
                          {"recipe_sha256", &baked.recipe_sha256}}) {
    LUME_UNLOCK_TRY_ASSIGN(auto value, required_string(entry, key, at, path));
    *out = value;
  }
  if (!is_digest(baked.digest)) {
    return invalid(path, "'" + at + "digest' must be 'sha256:' and 64 lower-case hex characters");
  }
  if (!util::is_sha256_hex(baked.recipe_sha256)) {
    return invalid(path, "'" + at + "recipe_sha256' must be 64 lower-case hex characters");
  }
  auto files = entry.find("shim_files");
  if (files == entry.end() || !files->is_array()) {
    return invalid(path, "'" + at + "shim_files' must be an array");
  }
  for (std::size_t i = 0; i < files->size(); ++i) {
    const std::string file_at = at + "shim_files[" + std::to_string(i) + "].";
    const auto& file = (*files)[i];
    if (!file.is_object()) {
      return invalid(path, "'" + file_at.substr(0, file_at.size() - 1) + "' must be an object");
    }
    LUME_UNLOCK_TRY_ASSIGN(auto file_path, required_string(file, "path", file_at, path));
    LUME_UNLOCK_TRY_ASSIGN(auto sha, required_string(file, "sha256", file_at, path));
    if (!util::is_sha256_hex(sha)) {
      return invalid(path, "'" + file_at + "sha256' must be 64 lower-case hex characters");
    }
    baked.shim_files.push_back({file_path, sha});
  }
  if (auto key = entry.find("signed_by"); key != entry.end()) {
    if (!key->is_string() || !is_digest(key->get<std::string>())) {
      return invalid(path, "'" + at + "signed_by' must be 'sha256:' and 64 lower-case hex");
    }
    baked.signed_by = key->get<std::string>();
  }
  return baked;
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
  auto json = util::parse_json(text).value;
  if (json.is_discarded() || !json.is_object()) {
    return invalid(path, "not a JSON object");
  }
  // Not json.value("schema", ""): it throws when "schema" holds an object (found by
  // lock_file_fuzz).
  const auto schema = json.find("schema");
  if (schema == json.end() || !schema->is_string() ||
      schema->get_ref<const std::string&>() != k_lock_schema) {
    return invalid(path, "'schema' must be '" + std::string(k_lock_schema) + "'");
  }
  LockFile lock;
  auto recipe = json.find("recipe");
  if (recipe == json.end() || !recipe->is_object()) {
    return invalid(path, "'recipe' must be an object");
  }
  LUME_UNLOCK_TRY_ASSIGN(auto recipe_path, required_string(*recipe, "path", "recipe.", path));
  lock.recipe_path = recipe_path;
  LUME_UNLOCK_TRY_ASSIGN(auto sha, required_string(*recipe, "sha256", "recipe.", path));
  if (!util::is_sha256_hex(sha)) {
    return invalid(path, "'recipe.sha256' must be 64 lower-case hex characters");
  }
  lock.recipe_sha256 = sha;
  auto references = json.find("references");
  if (references == json.end() || !references->is_array()) {
    return invalid(path, "'references' must be an array");
  }
  for (std::size_t i = 0; i < references->size(); ++i) {
    const auto& entry = (*references)[i];
    const std::string at = "references[" + std::to_string(i) + "].";
    if (!entry.is_object()) {
      return invalid(path, "'" + at.substr(0, at.size() - 1) + "' must be an object");
    }
    LUME_UNLOCK_TRY_ASSIGN(auto r, parse_locked_reference(entry, at, path));
    lock.references.push_back(r);
  }
  if (auto artifacts = json.find("artifacts"); artifacts != json.end()) {
    if (!artifacts->is_array()) {
      return invalid(path, "'artifacts' must be an array");
    }
    for (std::size_t i = 0; i < artifacts->size(); ++i) {
      const auto& entry = (*artifacts)[i];
      const std::string at = "artifacts[" + std::to_string(i) + "].";
      if (!entry.is_object()) {
        return invalid(path, "'" + at.substr(0, at.size() - 1) + "' must be an object");
      }
      LUME_UNLOCK_TRY_ASSIGN(auto a, parse_locked_artifact(entry, at, path));
      lock.artifacts.push_back(a);
    }
  }
  if (auto baked = json.find("baked"); baked != json.end()) {
    if (!baked->is_array()) {
      return invalid(path, "'baked' must be an array");
    }
    for (std::size_t i = 0; i < baked->size(); ++i) {
      LUME_UNLOCK_TRY_ASSIGN(
          auto entry, parse_baked_image((*baked)[i], "baked[" + std::to_string(i) + "].", path));
      lock.baked.push_back(entry);
    }
  }
  if (auto created = json.find("created_at"); created != json.end() && created->is_string()) {
    lock.created_at = created->get<std::string>();
  }
  return lock;
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

#include "recipe/lock_file.hpp"

#include "util/atomic_file.hpp"
#include "util/json_parse.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

namespace lume_unlock::recipe {

namespace {

using Json = nlohmann::json;

/// What is wrong with the lock file, thrown while it is read and caught by parse_lock_file.
struct Invalid {
  std::string why;
};

constexpr const char* k_hex = "64 lower-case hex characters";
constexpr const char* k_digest = "'sha256:' and 64 lower-case hex characters";

void require(bool holds, const std::string& at, const char* key, const std::string& rule) {
  if (!holds) {
    throw Invalid{"'" + at + key + "' must be " + rule};
  }
}

bool is_digest(const std::string& digest) {
  return util::starts_with(digest, "sha256:") && util::is_sha256_hex(digest.substr(7));
}

/// Each key of `fields`, a non-empty string of `object` ("at" names the object: "baked[0].").
void read_strings(const Json& object,
                  const std::string& at,
                  std::initializer_list<std::pair<const char*, std::string*>> fields) {
  for (auto [key, out] : fields) {
    const auto it = object.find(key);
    require(it != object.end() && it->is_string() && !it->get_ref<const std::string&>().empty(),
            at,
            key,
            "a non-empty string");
    *out = it->get<std::string>();
  }
}

std::optional<std::string> signed_by(const Json& entry, const std::string& at) {
  const auto key = entry.find("signed_by");
  if (key == entry.end()) {
    return std::nullopt;
  }
  require(key->is_string() && is_digest(key->get<std::string>()),
          at,
          "signed_by",
          "'sha256:' and 64 lower-case hex");
  return key->get<std::string>();
}

/// The array `key` of `parent`, each element an object read by `read(element, "key[i].")`.
template <class T, class Read>
std::vector<T> objects(const Json& parent, const std::string& at, const char* key, Read read) {
  const auto array = parent.find(key);
  require(array != parent.end() && array->is_array(), at, key, "an array");
  std::vector<T> out;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const std::string item = at + key + "[" + std::to_string(i) + "]";
    require((*array)[i].is_object(), item, "", "an object");
    out.push_back(read((*array)[i], item + "."));
  }
  return out;
}

/// One entry of `references`: a recipe field's reference pinned to a digest.
LockedReference read_reference(const Json& entry, const std::string& at) {
  LockedReference r;
  read_strings(entry,
               at,
               {{"field", &r.field},
                {"reference", &r.reference},
                {"digest", &r.digest},
                {"pinned", &r.pinned}});
  require(is_digest(r.digest), at, "digest", k_digest);
  if (auto mt = entry.find("media_type"); mt != entry.end() && mt->is_string()) {
    r.media_type = mt->get<std::string>();
  }
  r.signed_by = signed_by(entry, at);
  return r;
}

/// One entry of `artifacts`: an install item's source pinned to its SHA-256 and size.
LockedArtifact read_artifact(const Json& entry, const std::string& at) {
  LockedArtifact a;
  read_strings(entry, at, {{"field", &a.field}, {"source", &a.source}, {"sha256", &a.sha256}});
  require(util::is_sha256_hex(a.sha256), at, "sha256", k_hex);
  const auto size = entry.find("size");
  require(size != entry.end() && size->is_number_unsigned(), at, "size", "a whole number of bytes");
  a.size = size->get<std::uint64_t>();
  return a;
}

BakedImage read_baked(const Json& entry, const std::string& at) {
  BakedImage baked;
  read_strings(entry,
               at,
               {{"reference", &baked.reference},
                {"digest", &baked.digest},
                {"pinned", &baked.pinned},
                {"pushed_at", &baked.pushed_at},
                {"recipe_sha256", &baked.recipe_sha256}});
  require(is_digest(baked.digest), at, "digest", k_digest);
  require(util::is_sha256_hex(baked.recipe_sha256), at, "recipe_sha256", k_hex);
  baked.shim_files =
      objects<BakedFile>(entry, at, "shim_files", [](const Json& file, const std::string& file_at) {
        BakedFile f;
        read_strings(file, file_at, {{"path", &f.path}, {"sha256", &f.sha256}});
        require(util::is_sha256_hex(f.sha256), file_at, "sha256", k_hex);
        return f;
      });
  baked.signed_by = signed_by(entry, at);
  return baked;
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
  const Json json = util::parse_json(text).value;
  LockFile lock;
  try {
    if (json.is_discarded() || !json.is_object()) {
      throw Invalid{"not a JSON object"};
    }
    // Not json.value("schema", ""): it throws when "schema" holds an object (lock_file_fuzz).
    const auto schema = json.find("schema");
    require(schema != json.end() && *schema == k_lock_schema,
            "",
            "schema",
            "'" + std::string(k_lock_schema) + "'");
    const auto recipe = json.find("recipe");
    require(recipe != json.end() && recipe->is_object(), "", "recipe", "an object");
    read_strings(
        *recipe, "recipe.", {{"path", &lock.recipe_path}, {"sha256", &lock.recipe_sha256}});
    require(util::is_sha256_hex(lock.recipe_sha256), "recipe.", "sha256", k_hex);
    lock.references = objects<LockedReference>(json, "", "references", read_reference);
    if (json.contains("artifacts")) {
      lock.artifacts = objects<LockedArtifact>(json, "", "artifacts", read_artifact);
    }
    if (json.contains("baked")) {
      lock.baked = objects<BakedImage>(json, "", "baked", read_baked);
    }
  } catch (const Invalid& e) {
    return Error(ErrorCategory::usage,
                 "invalid lock file '" + path + "'",
                 e.why,
                 "recreate it with 'lume-unlock lock RECIPE'");
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

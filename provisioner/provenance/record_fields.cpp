#include "provenance/record_fields.hpp"

namespace lume_unlock::provenance::fields {

using nlohmann::json;

/// Puts a sub-object only when it has at least one known key.
void put_object(json& object, const char* key, const json& value) {
  if (!value.empty()) {
    object[key] = value;
  }
}

Error bad(const std::string& key, const std::string& why) {
  return Error(ErrorCategory::verification,
               "invalid provenance record",
               "'" + key + "' " + why,
               "rewrite it with 'lume-unlock create' or remove the file");
}

// Readers: absent or null leaves the optional empty; a wrong type is an error.
Status read(const json& object,
            const char* key,
            const std::string& path,
            std::optional<std::string>& out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    return ok_status();
  }
  if (!it->is_string()) {
    return bad(path + key, "must be a string");
  }
  out = it->get<std::string>();
  return ok_status();
}

Status read(const json& object,
            const char* key,
            const std::string& path,
            std::optional<std::int64_t>& out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    return ok_status();
  }
  if (!it->is_number_integer()) {
    return bad(path + key, "must be an integer");
  }
  out = it->get<std::int64_t>();
  return ok_status();
}

Status read(const json& object,
            const char* key,
            const std::string& path,
            std::optional<std::uint64_t>& out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    return ok_status();
  }
  if (!it->is_number_unsigned()) {
    return bad(path + key, "must be a non-negative integer");
  }
  out = it->get<std::uint64_t>();
  return ok_status();
}

Status
read(const json& object, const char* key, const std::string& path, std::optional<bool>& out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    return ok_status();
  }
  if (!it->is_boolean()) {
    return bad(path + key, "must be true or false");
  }
  out = it->get<bool>();
  return ok_status();
}

Status
read(const json& object, const char* key, const std::string& path, std::optional<json>& out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    return ok_status();
  }
  if (!it->is_object()) {
    return bad(path + key, "must be an object");
  }
  out = *it;
  return ok_status();
}

/// The sub-object at key, or nullptr when absent; an error when it is not an object.
Result<const json*> sub_object(const json& object, const char* key, const std::string& path) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    return static_cast<const json*>(nullptr);
  }
  if (!it->is_object()) {
    return bad(path + key, "must be an object");
  }
  return &*it;
}

} // namespace lume_unlock::provenance::fields

#pragma once

// The provenance record's JSON fields, typed: writers that leave absent values out, and readers
// for which absent or null leaves the optional empty and a wrong type is an error (verification,
// "invalid provenance record") naming the field by its path ("shim.files[0].sha256").

#include "util/error.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

// In a namespace of their own: `read` and `bad` are short names, meant for the record's code.
namespace lume_unlock::provenance::fields {

/// Sets object[key] when `value` holds one.
template <class T>
void put(nlohmann::json& object, const char* key, const std::optional<T>& value) {
  if (value) {
    object[key] = *value;
  }
}

/// Puts a sub-object only when it has at least one known key.
void put_object(nlohmann::json& object, const char* key, const nlohmann::json& value);

/// The error for the field at `key` (a path): "'<key>' <why>".
Error bad(const std::string& key, const std::string& why);

Status read(const nlohmann::json& object,
            const char* key,
            const std::string& path,
            std::optional<std::string>& out);
Status read(const nlohmann::json& object,
            const char* key,
            const std::string& path,
            std::optional<std::int64_t>& out);
Status read(const nlohmann::json& object,
            const char* key,
            const std::string& path,
            std::optional<std::uint64_t>& out);
Status read(const nlohmann::json& object,
            const char* key,
            const std::string& path,
            std::optional<bool>& out);
/// An object (a probe's answers, a bench record) kept as JSON.
Status read(const nlohmann::json& object,
            const char* key,
            const std::string& path,
            std::optional<nlohmann::json>& out);

/// The sub-object at key, or nullptr when absent; an error when it is not an object.
Result<const nlohmann::json*>
sub_object(const nlohmann::json& object, const char* key, const std::string& path);

/// A string or a non-negative integer that must be there.
template <class T>
Status require(const nlohmann::json& object, const char* key, const std::string& path, T& out) {
  std::optional<T> value;
  LUME_UNLOCK_TRY(read(object, key, path, value));
  if (!value) {
    return bad(path + key, "is missing");
  }
  out = *value;
  return ok_status();
}

} // namespace lume_unlock::provenance::fields

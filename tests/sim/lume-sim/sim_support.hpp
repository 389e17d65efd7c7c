#pragma once

// What the simulator's endpoint families (sim_vms, sim_sessions, sim_images, sim_settings)
// share: replies, Codable-like body decoding, and the file helpers of a VM directory.

#include "sim.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <string>

namespace lume_sim {

using nlohmann::json;

// Foundation's text for ArgumentParser.ValidationError, which is not a LocalizedError
// (reference §1.6): Lume sends this instead of the intended message.
inline const char* const k_validation_error =
    "The operation couldn\u2019t be completed. (ArgumentParser.ValidationError error 1.)";

Reply json_reply(int status, const json& j);
/// {"message": text}, Lume's error body (reference §1.6).
Reply message(int status, const std::string& text);

/// A request body decoded the way Swift's Codable would: wrong types or missing required keys
/// fail the whole decode; unknown keys are ignored; null counts as absent for optionals.
struct DecodeFailure {};

class Body {
public:
  explicit Body(const std::string& text) {
    if (text.empty()) {
      throw DecodeFailure{};
    }
    m_j = json::parse(text, nullptr, false);
    if (!m_j.is_object()) {
      throw DecodeFailure{};
    }
  }
  std::string string(const char* key) const {
    auto v = optional_string(key);
    if (!v) {
      throw DecodeFailure{};
    }
    return *v;
  }
  std::optional<std::string> optional_string(const char* key) const {
    const json* v = get(key);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->is_string()) {
      throw DecodeFailure{};
    }
    return v->get<std::string>();
  }
  std::optional<std::int64_t> optional_int(const char* key) const {
    const json* v = get(key);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (v->is_number_integer()) {
      return v->get<std::int64_t>();
    }
    if (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>()) {
      return static_cast<std::int64_t>(v->get<double>());
    }
    throw DecodeFailure{};
  }
  std::int64_t integer(const char* key) const {
    auto v = optional_int(key);
    if (!v) {
      throw DecodeFailure{};
    }
    return *v;
  }
  std::optional<bool> optional_bool(const char* key) const {
    const json* v = get(key);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->is_boolean()) {
      throw DecodeFailure{};
    }
    return v->get<bool>();
  }
  const json* get(const char* key) const {
    auto it = m_j.find(key);
    return it == m_j.end() || it->is_null() ? nullptr : &*it;
  }

private:
  json m_j;
};

std::optional<std::string> normalized_network(const std::string& n);
/// get/delete/run/stop/clone/PATCH/setup rewrite "a:b" (exactly one colon) to "a_b" (§3.0).
std::string normalized_name(std::string name);
std::string percent_decode(const std::string& s);
std::optional<json> read_json(const std::filesystem::path& path);
/// config.json is written pretty-printed (§6.2); temp + rename so a reader never sees half.
void write_json(const std::filesystem::path& path, const json& j, bool pretty);
std::int64_t unix_now();
/// Copies a file keeping holes (disk.img is sparse; Lume clones it with APFS clonefile, and a
/// plain copy would write gigabytes of zeros).
void copy_sparse(const std::filesystem::path& from, const std::filesystem::path& to);
bool is_vm_dir(const std::filesystem::path& dir);

} // namespace lume_sim

#include "provenance/provenance.hpp"

#include "lume/vm_name.hpp"
#include "provenance/record_fields.hpp"
#include "util/atomic_file.hpp"
#include "util/json_parse.hpp"

#include <cctype>
#include <ctime>

namespace lume_unlock::provenance {

// The record's typed field readers and writers (record_fields.hpp).
using namespace fields;

namespace {

using nlohmann::json;

Result<std::vector<ArtifactRecord>> read_artifacts(const json& list) {
  if (!list.is_array()) {
    return bad("artifacts", "must be an array");
  }
  std::vector<ArtifactRecord> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& a = list[i];
    const std::string at = "artifacts[" + std::to_string(i) + "].";
    if (!a.is_object()) {
      return bad(at.substr(0, at.size() - 1), "must be an object");
    }
    ArtifactRecord record;
    LUME_UNLOCK_TRY(require(a, "source", at, record.source));
    LUME_UNLOCK_TRY(require(a, "sha256", at, record.sha256));
    LUME_UNLOCK_TRY(require(a, "size", at, record.size));
    LUME_UNLOCK_TRY(require(a, "dest", at, record.dest));
    LUME_UNLOCK_TRY(require(a, "unpack", at, record.unpack));
    auto files = a.find("files");
    if (files == a.end() || !files->is_array()) {
      return bad(at + "files", "must be an array");
    }
    for (std::size_t j = 0; j < files->size(); ++j) {
      const json& f = (*files)[j];
      const std::string file_at = at + "files[" + std::to_string(j) + "].";
      if (!f.is_object()) {
        return bad(file_at.substr(0, file_at.size() - 1), "must be an object");
      }
      ArtifactFile file;
      LUME_UNLOCK_TRY(require(f, "path", file_at, file.path));
      LUME_UNLOCK_TRY(read(f, "link", file_at, file.link));
      if (!file.link) { // a link has a target instead of bytes
        LUME_UNLOCK_TRY(require(f, "sha256", file_at, file.sha256));
        LUME_UNLOCK_TRY(require(f, "size", file_at, file.size));
      } else if (f.contains("sha256")) { // a shared item's link: the bytes it leads to
        LUME_UNLOCK_TRY(require(f, "sha256", file_at, file.sha256));
        LUME_UNLOCK_TRY(require(f, "size", file_at, file.size));
      }
      LUME_UNLOCK_TRY(read(f, "macho", file_at, file.macho));
      record.files.push_back(std::move(file));
    }
    std::optional<bool> shared;
    LUME_UNLOCK_TRY(read(a, "shared", at, shared));
    record.shared = shared.value_or(false);
    out.push_back(std::move(record));
  }
  return out;
}

json shim_json(const ShimInfo& info) {
  json shim = json::object();
  put(shim, "bundle_version", info.bundle_version);
  put(shim, "bundle_reference", info.bundle_reference);
  put(shim, "bundle_digest", info.bundle_digest);
  put(shim, "bundle_signed_by", info.bundle_signed_by);
  put(shim, "platform", info.platform);
  if (info.profile) {
    json profile = json::object();
    put(profile, "apple_family_max", info.profile->apple_family_max);
    put(profile, "max_threadgroup_memory", info.profile->max_threadgroup_memory);
    put_object(shim, "profile", profile);
  }
  if (info.external) {
    shim["external"] = {{"dylib", info.external->path}, {"sha256", info.external->sha256}};
  }
  if (info.files) {
    shim["files"] = json::array();
    for (const auto& f : *info.files) {
      shim["files"].push_back({{"path", f.path}, {"sha256", f.sha256}});
    }
  }
  return shim;
}

json enablement_json(const std::vector<EnablementRecord>& records) {
  json list = json::array();
  for (const auto& e : records) {
    json entry = {{"name", e.name}};
    put(entry, "program", e.program);
    put(entry, "resolved_program", e.resolved_program);
    put(entry, "agent", e.agent);
    put(entry, "plist_sha256", e.plist_sha256);
    put(entry, "origin", e.origin);
    list.push_back(entry);
  }
  return list;
}

json artifacts_json(const std::vector<ArtifactRecord>& records) {
  json artifacts = json::array();
  for (const auto& a : records) {
    json files = json::array();
    for (const auto& f : a.files) {
      json file = f.link ? json{{"path", f.path}, {"link", *f.link}}
                         : json{{"path", f.path}, {"sha256", f.sha256}, {"size", f.size}};
      if (f.link && !f.sha256.empty()) { // a shared item's link: the bytes it leads to
        file["sha256"] = f.sha256;
        file["size"] = f.size;
      }
      put(file, "macho", f.macho);
      files.push_back(std::move(file));
    }
    artifacts.push_back({{"source", a.source},
                         {"sha256", a.sha256},
                         {"size", a.size},
                         {"dest", a.dest},
                         {"unpack", a.unpack},
                         {"files", std::move(files)}});
    if (a.shared) {
      artifacts.back()["shared"] = true;
    }
  }
  return artifacts;
}

// Each section of the record: absent leaves it empty; present, it must have its shape.

Status read_image(const json& in, Provenance& r) {
  auto image = sub_object(in, "image", "");
  LUME_UNLOCK_TRY(image);
  if (image.value() != nullptr) {
    ImageInfo info;
    LUME_UNLOCK_TRY(read(*image.value(), "reference", "image.", info.reference));
    LUME_UNLOCK_TRY(read(*image.value(), "digest", "image.", info.digest));
    LUME_UNLOCK_TRY(
        read(*image.value(), "lume_manifest_digest", "image.", info.lume_manifest_digest));
    LUME_UNLOCK_TRY(read(*image.value(), "signed_by", "image.", info.signed_by));
    r.image = info;
  }
  return ok_status();
}

Status read_hardware(const json& in, Provenance& r) {
  auto hardware = sub_object(in, "hardware", "");
  LUME_UNLOCK_TRY(hardware);
  if (hardware.value() != nullptr) {
    HardwareInfo info;
    LUME_UNLOCK_TRY(read(*hardware.value(), "cpu", "hardware.", info.cpu));
    LUME_UNLOCK_TRY(read(*hardware.value(), "memory_bytes", "hardware.", info.memory_bytes));
    LUME_UNLOCK_TRY(read(*hardware.value(), "disk_bytes", "hardware.", info.disk_bytes));
    r.hardware = info;
  }
  return ok_status();
}

Status read_guest(const json& in, Provenance& r) {
  auto guest = sub_object(in, "guest", "");
  LUME_UNLOCK_TRY(guest);
  if (guest.value() != nullptr) {
    GuestInfo info;
    LUME_UNLOCK_TRY(read(*guest.value(), "os", "guest.", info.os));
    LUME_UNLOCK_TRY(read(*guest.value(), "version", "guest.", info.version));
    LUME_UNLOCK_TRY(read(*guest.value(), "build", "guest.", info.build));
    LUME_UNLOCK_TRY(read(*guest.value(), "arch", "guest.", info.arch));
    r.guest = info;
  }
  return ok_status();
}

/// shim.files: [{path, sha256}], both required.
Status read_shim_files(const json& s, ShimInfo& info) {
  if (auto files = s.find("files"); files != s.end() && !files->is_null()) {
    if (!files->is_array()) {
      return bad("shim.files", "must be an array");
    }
    info.files.emplace();
    for (std::size_t i = 0; i < files->size(); ++i) {
      const json& f = (*files)[i];
      const std::string at = "shim.files[" + std::to_string(i) + "].";
      std::optional<std::string> path;
      std::optional<std::string> sha;
      if (!f.is_object()) {
        return bad(at.substr(0, at.size() - 1), "must be an object");
      }
      LUME_UNLOCK_TRY(read(f, "path", at, path));
      LUME_UNLOCK_TRY(read(f, "sha256", at, sha));
      if (!path || !sha) {
        return bad(at + (path ? "sha256" : "path"), "is missing");
      }
      info.files->push_back({*path, *sha});
    }
  }
  return ok_status();
}

Status read_shim(const json& in, Provenance& r) {
  auto shim = sub_object(in, "shim", "");
  LUME_UNLOCK_TRY(shim);
  if (shim.value() != nullptr) {
    const json& s = *shim.value();
    ShimInfo info;
    LUME_UNLOCK_TRY(read(s, "bundle_version", "shim.", info.bundle_version));
    LUME_UNLOCK_TRY(read(s, "bundle_reference", "shim.", info.bundle_reference));
    LUME_UNLOCK_TRY(read(s, "bundle_digest", "shim.", info.bundle_digest));
    LUME_UNLOCK_TRY(read(s, "bundle_signed_by", "shim.", info.bundle_signed_by));
    LUME_UNLOCK_TRY(read(s, "platform", "shim.", info.platform));
    auto profile = sub_object(s, "profile", "shim.");
    LUME_UNLOCK_TRY(profile);
    if (profile.value() != nullptr) {
      ShimProfile p;
      LUME_UNLOCK_TRY(
          read(*profile.value(), "apple_family_max", "shim.profile.", p.apple_family_max));
      LUME_UNLOCK_TRY(read(
          *profile.value(), "max_threadgroup_memory", "shim.profile.", p.max_threadgroup_memory));
      info.profile = p;
    }
    LUME_UNLOCK_TRY(read_shim_files(s, info));
    auto external = sub_object(s, "external", "shim.");
    LUME_UNLOCK_TRY(external);
    if (external.value() != nullptr) {
      info.external.emplace();
      LUME_UNLOCK_TRY(require(*external.value(), "dylib", "shim.external.", info.external->path));
      LUME_UNLOCK_TRY(
          require(*external.value(), "sha256", "shim.external.", info.external->sha256));
    }
    r.shim = info;
  }
  return ok_status();
}

Status read_enablement(const json& in, Provenance& r) {
  if (auto enablement = in.find("enablement"); enablement != in.end() && !enablement->is_null()) {
    if (!enablement->is_array()) {
      return bad("enablement", "must be an array");
    }
    r.enablement.emplace();
    for (std::size_t i = 0; i < enablement->size(); ++i) {
      const json& e = (*enablement)[i];
      const std::string at = "enablement[" + std::to_string(i) + "].";
      if (!e.is_object()) {
        return bad(at.substr(0, at.size() - 1), "must be an object");
      }
      std::optional<std::string> name;
      LUME_UNLOCK_TRY(read(e, "name", at, name));
      if (!name) {
        return bad(at + "name", "is missing");
      }
      EnablementRecord record;
      record.name = *name;
      LUME_UNLOCK_TRY(read(e, "program", at, record.program));
      LUME_UNLOCK_TRY(read(e, "resolved_program", at, record.resolved_program));
      LUME_UNLOCK_TRY(read(e, "agent", at, record.agent));
      LUME_UNLOCK_TRY(read(e, "plist_sha256", at, record.plist_sha256));
      LUME_UNLOCK_TRY(read(e, "origin", at, record.origin));
      if (record.origin && *record.origin != k_origin_recipe && *record.origin != k_origin_allow) {
        return bad(at + "origin", "must be 'recipe' or 'allow'");
      }
      r.enablement->push_back(record);
    }
  }
  return ok_status();
}

Status read_probe(const json& in, Provenance& r) {
  auto probe = sub_object(in, "probe", "");
  LUME_UNLOCK_TRY(probe);
  if (probe.value() != nullptr) {
    ProbeInfo info;
    LUME_UNLOCK_TRY(read(*probe.value(), "stock", "probe.", info.stock));
    LUME_UNLOCK_TRY(read(*probe.value(), "unlocked", "probe.", info.unlocked));
    r.probe = info;
  }
  return ok_status();
}

Status read_recipe(const json& in, Provenance& r) {
  auto recipe = sub_object(in, "recipe", "");
  LUME_UNLOCK_TRY(recipe);
  if (recipe.value() != nullptr) {
    RecipeInfo info;
    LUME_UNLOCK_TRY(read(*recipe.value(), "path", "recipe.", info.path));
    LUME_UNLOCK_TRY(read(*recipe.value(), "sha256", "recipe.", info.sha256));
    r.recipe = info;
  }
  return ok_status();
}

} // namespace

json to_json(const Provenance& r) {
  json out = {{"schema", k_schema}, {"vm", r.vm}};
  put(out, "lume_url", r.lume_url);
  if (r.image) {
    json image = json::object();
    put(image, "reference", r.image->reference);
    put(image, "digest", r.image->digest);
    put(image, "lume_manifest_digest", r.image->lume_manifest_digest);
    put(image, "signed_by", r.image->signed_by);
    put_object(out, "image", image);
  }
  if (r.hardware) {
    json hardware = json::object();
    put(hardware, "cpu", r.hardware->cpu);
    put(hardware, "memory_bytes", r.hardware->memory_bytes);
    put(hardware, "disk_bytes", r.hardware->disk_bytes);
    put_object(out, "hardware", hardware);
  }
  if (r.guest) {
    json guest = json::object();
    put(guest, "os", r.guest->os);
    put(guest, "version", r.guest->version);
    put(guest, "build", r.guest->build);
    put(guest, "arch", r.guest->arch);
    put_object(out, "guest", guest);
  }
  if (r.shim) {
    put_object(out, "shim", shim_json(*r.shim));
  }
  if (r.enablement) {
    out["enablement"] = enablement_json(*r.enablement);
  }
  if (r.probe) {
    json probe = json::object();
    put(probe, "stock", r.probe->stock);
    put(probe, "unlocked", r.probe->unlocked);
    put_object(out, "probe", probe);
  }
  if (r.recipe) {
    json recipe = json::object();
    put(recipe, "path", r.recipe->path);
    put(recipe, "sha256", r.recipe->sha256);
    put_object(out, "recipe", recipe);
  }
  put(out, "bench", r.bench);
  if (r.artifacts) {
    out["artifacts"] = artifacts_json(*r.artifacts);
  }
  put(out, "created_at", r.created_at);
  put(out, "updated_at", r.updated_at);
  return out;
}

Result<Provenance> provenance_from_json(const json& in) {
  if (!in.is_object()) {
    return bad("", "document must be an object");
  }
  Provenance r;
  std::optional<std::string> schema;
  LUME_UNLOCK_TRY(read(in, "schema", "", schema));
  if (schema != std::string(k_schema)) {
    return Error(ErrorCategory::verification,
                 "invalid provenance record",
                 "'schema' is '" + schema.value_or("") + "', expected '" + k_schema + "'",
                 "this record was written by another tool or version");
  }
  std::optional<std::string> vm;
  LUME_UNLOCK_TRY(read(in, "vm", "", vm));
  if (!vm || vm->empty()) {
    return bad("vm", "is missing");
  }
  r.vm = *vm;
  LUME_UNLOCK_TRY(read(in, "lume_url", "", r.lume_url));

  LUME_UNLOCK_TRY(read_image(in, r));
  LUME_UNLOCK_TRY(read_hardware(in, r));
  LUME_UNLOCK_TRY(read_guest(in, r));
  LUME_UNLOCK_TRY(read_shim(in, r));
  LUME_UNLOCK_TRY(read_enablement(in, r));
  LUME_UNLOCK_TRY(read_probe(in, r));
  LUME_UNLOCK_TRY(read_recipe(in, r));
  LUME_UNLOCK_TRY(read(in, "bench", "", r.bench));
  if (auto artifacts = in.find("artifacts"); artifacts != in.end() && !artifacts->is_null()) {
    LUME_UNLOCK_TRY_ASSIGN(auto list, read_artifacts(*artifacts));
    r.artifacts = std::move(list);
  }
  LUME_UNLOCK_TRY(read(in, "created_at", "", r.created_at));
  LUME_UNLOCK_TRY(read(in, "updated_at", "", r.updated_at));
  for (const auto* stamp : {&r.created_at, &r.updated_at}) {
    if (*stamp && !is_rfc3339(**stamp)) {
      return bad(stamp == &r.created_at ? "created_at" : "updated_at",
                 "must be an RFC 3339 time, got '" + **stamp + "'");
    }
  }
  return r;
}

Result<Provenance> parse_provenance(std::string_view text) {
  auto document = util::parse_json(text).value;
  if (document.is_discarded()) {
    return bad("", "document is not valid JSON");
  }
  return provenance_from_json(document);
}

Result<std::string> provenance_path(const std::string& state_dir, const std::string& vm) {
  // Lume's name rule (lume::VmName) keeps the path inside <state>/vms/: no "..", no '/'.
  if (!lume::check_vm_name(vm).ok()) {
    return Error(ErrorCategory::usage,
                 "invalid VM name '" + vm + "'",
                 "use letters, digits, '.', '_' and '-' (not '.' or '..')",
                 "run 'lume-unlock status NAME' with the name Lume shows");
  }
  return state_dir + "/vms/" + vm + "/provenance.json";
}

Status write_provenance(const std::string& state_dir, const Provenance& record) {
  LUME_UNLOCK_TRY_ASSIGN(auto path, provenance_path(state_dir, record.vm));
  const std::string dir = path.substr(0, path.rfind('/'));
  LUME_UNLOCK_TRY(util::make_directories(dir, 0700));
  return util::write_file_atomic(path, to_json(record).dump(2) + "\n", 0644);
}

Result<Provenance> read_provenance(const std::string& state_dir, const std::string& vm) {
  LUME_UNLOCK_TRY_ASSIGN(auto path, provenance_path(state_dir, vm));
  LUME_UNLOCK_TRY_ASSIGN(
      auto text, util::read_input_file(path, k_max_provenance_bytes, "the provenance record"));
  auto parsed = parse_provenance(text);
  if (!parsed) {
    return parsed.error().with_context("'" + path + "'");
  }
  if (parsed.value().vm != vm) {
    return Error(ErrorCategory::verification,
                 "invalid provenance record '" + path + "'",
                 "it names VM '" + parsed.value().vm + "', not '" + vm + "'");
  }
  return parsed;
}

std::string origin_of(const EnablementRecord& record) {
  return record.origin.value_or(k_origin_recipe);
}

std::string rfc3339_now() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

bool is_rfc3339(std::string_view t) {
  auto digits = [&](std::size_t at, std::size_t n) {
    if (at + n > t.size()) {
      return false;
    }
    for (std::size_t i = at; i < at + n; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(t[i]))) {
        return false;
      }
    }
    return true;
  };
  if (!(digits(0, 4) && t.size() > 19 && t[4] == '-' && digits(5, 2) && t[7] == '-' &&
        digits(8, 2) && (t[10] == 'T' || t[10] == 't') && digits(11, 2) && t[13] == ':' &&
        digits(14, 2) && t[16] == ':' && digits(17, 2))) {
    return false;
  }
  std::size_t i = 19;
  if (t[i] == '.') {
    std::size_t start = ++i;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) {
      ++i;
    }
    if (i == start) {
      return false;
    }
  }
  if (i < t.size() && (t[i] == 'Z' || t[i] == 'z')) {
    return i + 1 == t.size();
  }
  return i + 6 == t.size() && (t[i] == '+' || t[i] == '-') && digits(i + 1, 2) && t[i + 3] == ':' &&
         digits(i + 4, 2);
}

} // namespace lume_unlock::provenance

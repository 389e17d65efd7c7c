#include "provenance/provenance.hpp"

#include "lume/types.hpp"
#include "util/atomic_file.hpp"
#include "util/json_reader.hpp"
#include "util/text_check.hpp"

#include <cctype>
#include <ctime>

namespace lume_unlock::provenance {

namespace {

using nlohmann::json;
using util::JsonObject;
using util::JsonValue;

template <class T>
void put(json& object, const char* key, const std::optional<T>& value) {
  if (value) {
    object[key] = *value;
  }
}

/// A value that may be unknown, as JSON (null when it is).
template <class T>
json known(const std::optional<T>& value) {
  return value ? json(*value) : json();
}

/// Puts the members that are known as a sub-object, only when at least one is.
void put_object(json& object,
                const char* key,
                std::initializer_list<std::pair<const char*, json>> members) {
  json value = json::object();
  for (const auto& [name, member] : members) {
    if (!member.is_null()) {
      value[name] = member;
    }
  }
  if (!value.empty()) {
    object[key] = value;
  }
}

const util::JsonDocument k_record{ErrorCategory::verification,
                                  "invalid provenance record",
                                  "rewrite it with 'lume-unlock create' or remove the file"};

std::optional<std::string> text(const JsonObject& o, const char* key) {
  return o.optional_string(key);
}

/// An object (a probe's answers, a bench record) kept as JSON.
std::optional<json> object_json(const JsonObject& o, const char* key) {
  const auto found = o.find(key);
  return found ? std::optional<json>(found->object().value().json()) : std::nullopt;
}

ArtifactFile read_artifact_file(const JsonObject& f) {
  ArtifactFile file;
  file.path = f.string("path");
  file.link = text(f, "link");
  // A link has a target instead of bytes; a shared item's link has the bytes it leads to.
  if (!file.link || f.has("sha256")) {
    file.sha256 = f.string("sha256");
    file.size = f.unsigned_integer("size");
  }
  file.macho = text(f, "macho");
  return file;
}

std::vector<ArtifactRecord> read_artifacts(const JsonValue& list) {
  std::vector<ArtifactRecord> out;
  for (const JsonValue& item : list.array()) {
    const JsonObject a = item.object();
    ArtifactRecord record{a.string("source"),
                          a.string("sha256"),
                          a.unsigned_integer("size"),
                          a.string("dest"),
                          a.string("unpack"),
                          {},
                          a.optional("shared", &JsonValue::boolean).value_or(false)};
    for (const JsonValue& f : a.array("files")) {
      record.files.push_back(read_artifact_file(f.object()));
    }
    out.push_back(std::move(record));
  }
  return out;
}

ShimInfo read_shim(const JsonObject& s) {
  ShimInfo info;
  info.bundle_version = text(s, "bundle_version");
  info.bundle_reference = text(s, "bundle_reference");
  info.bundle_digest = text(s, "bundle_digest");
  info.bundle_signed_by = text(s, "bundle_signed_by");
  info.platform = text(s, "platform");
  if (const auto profile = s.find("profile")) {
    const JsonObject p = profile->object();
    info.profile = ShimProfile{p.optional("apple_family_max", &JsonValue::integer),
                               p.optional("max_threadgroup_memory", &JsonValue::integer)};
  }
  if (const auto files = s.find("files")) {
    info.files.emplace();
    for (const JsonValue& f : files->array()) {
      info.files->push_back({f.object().string("path"), f.object().string("sha256")});
    }
  }
  if (const auto external = s.find("external")) {
    info.external =
        FileHash{external->object().string("dylib"), external->object().string("sha256")};
  }
  return info;
}

EnablementRecord read_enablement_record(const JsonObject& e) {
  EnablementRecord record{e.string("name"),
                          text(e, "program"),
                          e.optional("agent", &JsonValue::boolean),
                          text(e, "plist_sha256"),
                          text(e, "origin"),
                          text(e, "resolved_program")};
  if (record.origin && *record.origin != k_origin_recipe && *record.origin != k_origin_allow) {
    e.at("origin").fail("expected 'recipe' or 'allow', got " +
                        util::quote_for_message(*record.origin));
  }
  return record;
}

/// The record's sections: absent leaves one empty; present, it must have its shape.
void read_sections(const JsonObject& in, Provenance& r) {
  if (const auto image = in.find("image")) {
    const JsonObject i = image->object();
    r.image = ImageInfo{text(i, "reference"),
                        text(i, "digest"),
                        text(i, "lume_manifest_digest"),
                        text(i, "signed_by")};
  }
  if (const auto hardware = in.find("hardware")) {
    const JsonObject h = hardware->object();
    r.hardware = HardwareInfo{h.optional("cpu", &JsonValue::integer),
                              h.optional("memory_bytes", &JsonValue::unsigned_integer),
                              h.optional("disk_bytes", &JsonValue::unsigned_integer)};
  }
  if (const auto guest = in.find("guest")) {
    const JsonObject g = guest->object();
    r.guest = GuestInfo{text(g, "os"), text(g, "version"), text(g, "build"), text(g, "arch")};
  }
  if (const auto shim = in.find("shim")) {
    r.shim = read_shim(shim->object());
  }
  if (const auto enablement = in.find("enablement")) {
    r.enablement.emplace();
    for (const JsonValue& e : enablement->array()) {
      r.enablement->push_back(read_enablement_record(e.object()));
    }
  }
  if (const auto probe = in.find("probe")) {
    r.probe =
        ProbeInfo{object_json(probe->object(), "stock"), object_json(probe->object(), "unlocked")};
  }
  if (const auto recipe = in.find("recipe")) {
    r.recipe = RecipeInfo{text(recipe->object(), "path"), text(recipe->object(), "sha256")};
  }
  if (const auto cloned = in.find("cloned_from")) {
    const JsonObject c = cloned->object();
    r.cloned_from = ClonedFrom{text(c, "vm"), text(c, "record_sha256"), text(c, "ssh_host_key")};
  }
  r.bench = object_json(in, "bench");
  if (const auto artifacts = in.find("artifacts")) {
    r.artifacts = read_artifacts(*artifacts);
  }
}

std::optional<std::string> time_stamp(const JsonObject& in, const char* key) {
  auto stamp = text(in, key);
  if (stamp && !is_rfc3339(*stamp)) {
    in.at(key).fail("expected an RFC 3339 time, got " + util::quote_for_message(*stamp));
  }
  return stamp;
}

Provenance read_record(const JsonValue& value) {
  const JsonObject in = value.object();
  const JsonValue schema = in.at("schema", "a string");
  if (schema.string() != k_schema) {
    schema.fail("expected '" + std::string(k_schema) + "', got " +
                    util::quote_for_message(schema.string()),
                "this record was written by another tool or version");
  }
  Provenance r;
  r.vm = in.string("vm");
  if (r.vm.empty()) {
    in.at("vm").fail("empty, expected the VM's name");
  }
  r.lume_url = text(in, "lume_url");
  read_sections(in, r);
  r.created_at = time_stamp(in, "created_at");
  r.updated_at = time_stamp(in, "updated_at");
  return r;
}

json shim_json(const ShimInfo& info) {
  json shim = json::object();
  put(shim, "bundle_version", info.bundle_version);
  put(shim, "bundle_reference", info.bundle_reference);
  put(shim, "bundle_digest", info.bundle_digest);
  put(shim, "bundle_signed_by", info.bundle_signed_by);
  put(shim, "platform", info.platform);
  if (info.profile) {
    put_object(shim,
               "profile",
               {{"apple_family_max", known(info.profile->apple_family_max)},
                {"max_threadgroup_memory", known(info.profile->max_threadgroup_memory)}});
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

} // namespace

json to_json(const Provenance& r) {
  json out = {{"schema", k_schema}, {"vm", r.vm}};
  put(out, "lume_url", r.lume_url);
  if (r.image) {
    put_object(out,
               "image",
               {{"reference", known(r.image->reference)},
                {"digest", known(r.image->digest)},
                {"lume_manifest_digest", known(r.image->lume_manifest_digest)},
                {"signed_by", known(r.image->signed_by)}});
  }
  if (r.hardware) {
    put_object(out,
               "hardware",
               {{"cpu", known(r.hardware->cpu)},
                {"memory_bytes", known(r.hardware->memory_bytes)},
                {"disk_bytes", known(r.hardware->disk_bytes)}});
  }
  if (r.guest) {
    put_object(out,
               "guest",
               {{"os", known(r.guest->os)},
                {"version", known(r.guest->version)},
                {"build", known(r.guest->build)},
                {"arch", known(r.guest->arch)}});
  }
  if (json shim = r.shim ? shim_json(*r.shim) : json::object(); !shim.empty()) {
    out["shim"] = std::move(shim);
  }
  if (r.enablement) {
    out["enablement"] = enablement_json(*r.enablement);
  }
  if (r.probe) {
    put_object(
        out, "probe", {{"stock", known(r.probe->stock)}, {"unlocked", known(r.probe->unlocked)}});
  }
  if (r.recipe) {
    put_object(
        out, "recipe", {{"path", known(r.recipe->path)}, {"sha256", known(r.recipe->sha256)}});
  }
  if (r.cloned_from) {
    put_object(out,
               "cloned_from",
               {{"vm", known(r.cloned_from->vm)},
                {"record_sha256", known(r.cloned_from->record_sha256)},
                {"ssh_host_key", known(r.cloned_from->ssh_host_key)}});
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
  return util::read_json(in, k_record, read_record);
}

Result<Provenance> parse_provenance(std::string_view text) {
  return util::read_json_text(text, k_record, read_record);
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
  // `pattern` at `at`: 'd' is a digit, 'T' is T or t, anything else itself.
  const auto matches = [&](std::size_t at, std::string_view pattern) {
    for (std::size_t i = 0; i < pattern.size(); ++i) {
      const char c = at + i < t.size() ? t[at + i] : '\0';
      if (pattern[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(c))
                            : c != pattern[i] && !(pattern[i] == 'T' && c == 't')) {
        return false;
      }
    }
    return true;
  };
  if (!matches(0, "dddd-dd-ddTdd:dd:dd")) {
    return false;
  }
  std::size_t i = 19;
  if (i < t.size() && t[i] == '.') {
    const std::size_t start = ++i;
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
  return i + 6 == t.size() && (t[i] == '+' || t[i] == '-') && matches(i + 1, "dd:dd");
}

bool same_provenance(const Provenance& a, const Provenance& b) {
  nlohmann::json left = to_json(a);
  nlohmann::json right = to_json(b);
  for (auto* doc : {&left, &right}) {
    doc->erase("created_at");
    doc->erase("updated_at");
  }
  return left == right;
}

namespace {

/// `record` with what a pull knows of a VM (name, Lume URL, image, hardware) from `pulled`.
Provenance with_pulled_image(Provenance record, const Provenance& pulled) {
  record.vm = pulled.vm;
  record.lume_url = pulled.lume_url;
  record.image = pulled.image;
  record.hardware = pulled.hardware;
  return record;
}

} // namespace

std::optional<Provenance> record_after_pull(const std::optional<Provenance>& existing,
                                            const Provenance& pulled,
                                            const std::string& now) {
  Provenance record = with_pulled_image(existing ? *existing : Provenance{}, pulled);
  if (existing && to_json(record) == to_json(*existing)) {
    return std::nullopt;
  }
  if (!record.created_at) {
    record.created_at = now;
  }
  record.updated_at = now;
  return record;
}

Provenance
adopt_baked_record(const Provenance& baked, const Provenance& pulled, const std::string& now) {
  Provenance adopted = with_pulled_image(baked, pulled);
  if (!same_provenance(adopted, baked)) {
    adopted.created_at = now;
    adopted.updated_at = now;
  }
  return adopted;
}

const std::vector<CertifiedBuild>& certified_builds() {
  static const std::vector<CertifiedBuild> builds = {
      {"LumeMetalCapabilities-arm64.dylib",
       "515b9d84ab67e86d959282e95c194a5ad8a947261514b947d6f7483c57797b31"},
      {"LumeMetalCapabilities-arm64e.dylib",
       "62504be341ed74191eab22f19e21d99b2afbe6cc029902c760578ffbbd0588cb"},
  };
  return builds;
}

std::optional<CertifiedBuild> certified_build(std::string_view sha256) {
  for (const CertifiedBuild& build : certified_builds()) {
    if (sha256 == build.sha256) {
      return build;
    }
  }
  return std::nullopt;
}

std::string shim_that_ran(const ShimInfo& shim) {
  if (shim.external) {
    const std::string& digest = shim.external->sha256;
    return certified_build(digest) ? "certified upstream build " + digest.substr(0, 8) + "…"
                                   : "external shim " + digest;
  }
  if (shim.files && !shim.files->empty()) {
    return "lume-unlock shim " + shim.files->front().sha256;
  }
  return {};
}

} // namespace lume_unlock::provenance

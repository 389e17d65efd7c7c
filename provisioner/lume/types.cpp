#include "lume/types.hpp"

#include "util/size.hpp"

#include <cmath>
#include <sstream>

namespace lume_unlock::lume {

using nlohmann::json;

namespace {

/// Thrown inside this file only; every public reader turns it into a Result.
struct ShapeError {
  std::string why;
};

std::string type_name(const json& j) {
  switch (j.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
    return "an integer";
  case json::value_t::number_float:
    return "a fractional number";
  case json::value_t::string:
    return "a string";
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  default:
    return "something else";
  }
}

/// Reads typed keys of one JSON object; `path` prefixes key names in errors ("diskSize.total").
class ObjectReader {
public:
  ObjectReader(const json& j, std::string path) : m_j(j), m_path(std::move(path)) {
    if (!j.is_object()) {
      throw ShapeError{(m_path.empty() ? std::string("the body") : "'" + m_path + "'") + " is " +
                       type_name(j) + ", expected an object"};
    }
  }

  std::string string(const char* key) const { return require_string(get(key, false), key); }
  std::optional<std::string> optional_string(const char* key) const {
    const json* v = get(key, true);
    return v == nullptr ? std::nullopt : std::optional<std::string>(require_string(v, key));
  }
  std::uint64_t unsigned_integer(const char* key) const {
    const json* v = get(key, false);
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<std::int64_t>() >= 0)) {
      throw wrong(key, *v, "a non-negative integer");
    }
    return v->get<std::uint64_t>();
  }
  bool boolean(const char* key) const {
    const json* v = get(key, false);
    if (!v->is_boolean()) {
      throw wrong(key, *v, "a boolean");
    }
    return v->get<bool>();
  }
  std::optional<bool> optional_boolean(const char* key) const {
    const json* v = get(key, true);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->is_boolean()) {
      throw wrong(key, *v, "a boolean or null");
    }
    return v->get<bool>();
  }
  std::optional<double> optional_number(const char* key) const {
    const json* v = get(key, true);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->is_number()) {
      throw wrong(key, *v, "a number or null");
    }
    return v->get<double>();
  }
  const json& value(const char* key) const { return *get(key, false); }
  const json* optional_value(const char* key) const { return get(key, true); }
  std::string child_path(const char* key) const {
    return m_path.empty() ? std::string(key) : m_path + "." + key;
  }

private:
  /// The value of `key`; nullptr for missing or null when `optional`, else a ShapeError.
  const json* get(const char* key, bool optional) const {
    auto it = m_j.find(key);
    if (it == m_j.end() || it->is_null()) {
      if (optional) {
        return nullptr;
      }
      throw ShapeError{"key '" + child_path(key) + "' is " +
                       (it == m_j.end() ? std::string("missing") : std::string("null"))};
    }
    return &*it;
  }
  std::string require_string(const json* v, const char* key) const {
    if (!v->is_string()) {
      throw wrong(key, *v, "a string");
    }
    return v->get<std::string>();
  }
  ShapeError wrong(const char* key, const json& v, const char* expected) const {
    return ShapeError{"key '" + child_path(key) + "' is " + type_name(v) + ", expected " +
                      expected};
  }

  const json& m_j;
  std::string m_path;
};

template <class T, class F>
Result<T> guarded(F&& f) {
  try {
    return f();
  } catch (const ShapeError& e) {
    return Error(ErrorCategory::lume_api, "", e.why);
  }
}

VmDetails read_details(const json& j, const std::string& path) {
  ObjectReader r(j, path);
  VmDetails d;
  d.name = r.string("name");
  d.os = r.string("os");
  d.cpu_count = r.unsigned_integer("cpuCount");
  d.memory_size = r.unsigned_integer("memorySize");
  ObjectReader disk(r.value("diskSize"), r.child_path("diskSize"));
  d.disk_size.allocated = disk.unsigned_integer("allocated");
  d.disk_size.total = disk.unsigned_integer("total");
  d.display = r.string("display");
  d.status_text = r.string("status");
  d.status = parse_status(d.status_text);
  d.provisioning_operation = r.optional_string("provisioningOperation");
  d.vnc_url = r.optional_string("vncUrl");
  d.ip_address = r.optional_string("ipAddress");
  d.ssh_available = r.optional_boolean("sshAvailable");
  d.location_name = r.string("locationName");
  if (const json* shared = r.optional_value("sharedDirectories")) {
    d.shared_directories = *shared;
  }
  d.network_mode = r.string("networkMode");
  d.download_progress = r.optional_number("downloadProgress");
  return d;
}

const json& require_array(const json& j) {
  if (!j.is_array()) {
    throw ShapeError{"the body is " + type_name(j) + ", expected an array"};
  }
  return j;
}

void put_optional(json& j, const char* key, const std::optional<std::string>& value) {
  if (value) {
    j[key] = *value;
  }
}

} // namespace

const char* status_text(VmStatus status) {
  switch (status) {
  case VmStatus::provisioning:
    return "provisioning";
  case VmStatus::provisioning_stale:
    return "provisioning (stale)";
  case VmStatus::running:
    return "running";
  case VmStatus::stopped:
    return "stopped";
  case VmStatus::pulling:
    return "pulling";
  case VmStatus::other:
    break;
  }
  return "other";
}

VmStatus parse_status(const std::string& text) {
  for (VmStatus s : {VmStatus::provisioning,
                     VmStatus::provisioning_stale,
                     VmStatus::running,
                     VmStatus::stopped,
                     VmStatus::pulling}) {
    if (text == status_text(s)) {
      return s;
    }
  }
  return VmStatus::other;
}

const std::string& name_of(const VmState& state) {
  return std::visit([](const auto& s) -> const std::string& { return s.name; }, state);
}

VmStatus status_of(const VmState& state) {
  if (const auto* d = std::get_if<VmDetails>(&state)) {
    return d->status;
  }
  return VmStatus::pulling;
}

std::string describe(const VmState& state) {
  if (const auto* p = std::get_if<PullProgress>(&state)) {
    std::ostringstream s;
    s << "pulling " << std::lround(p->download_progress) << "%";
    return s.str();
  }
  const auto& d = std::get<VmDetails>(state);
  std::string text = d.status_text;
  if (d.status == VmStatus::running) {
    if (!d.ip_address) {
      text += " (no IP address yet)";
    } else {
      text += " (" + *d.ip_address + ", ssh " +
              (d.ssh_available.value_or(false) ? "open" : "not reachable") + ")";
    }
  }
  return text;
}

Result<VmDetails> vm_details_from_json(const json& j) {
  return guarded<VmDetails>([&] { return read_details(j, ""); });
}

Result<VmState> vm_state_from_json(const json& j) {
  return guarded<VmState>([&]() -> VmState {
    ObjectReader r(j, "");
    if (r.string("status") == "pulling") {
      PullProgress p;
      p.name = r.string("name");
      p.download_progress = r.optional_number("downloadProgress").value_or(0);
      return p;
    }
    return read_details(j, "");
  });
}

Result<std::vector<VmDetails>> vm_list_from_json(const json& j) {
  return guarded<std::vector<VmDetails>>([&] {
    std::vector<VmDetails> out;
    const json& array = require_array(j);
    for (std::size_t i = 0; i < array.size(); ++i) {
      out.push_back(read_details(array[i], "[" + std::to_string(i) + "]"));
    }
    return out;
  });
}

Result<std::vector<ImageInfo>> images_from_json(const json& j) {
  return guarded<std::vector<ImageInfo>>([&] {
    std::vector<ImageInfo> out;
    const json& array = require_array(j);
    for (std::size_t i = 0; i < array.size(); ++i) {
      ObjectReader r(array[i], "[" + std::to_string(i) + "]");
      out.push_back({r.string("repository"), r.string("imageId")});
    }
    return out;
  });
}

Result<LumeConfig> config_from_json(const json& j) {
  return guarded<LumeConfig>([&] {
    ObjectReader r(j, "");
    LumeConfig c;
    const json& locations = r.value("vmLocations");
    if (!locations.is_array()) {
      throw ShapeError{"key 'vmLocations' is " + type_name(locations) + ", expected an array"};
    }
    for (std::size_t i = 0; i < locations.size(); ++i) {
      ObjectReader l(locations[i], "vmLocations[" + std::to_string(i) + "]");
      c.vm_locations.push_back({l.string("name"), l.string("path")});
    }
    c.default_location_name = r.string("defaultLocationName");
    c.cache_directory = r.string("cacheDirectory");
    c.caching_enabled = r.boolean("cachingEnabled");
    if (const json* registry = r.optional_value("registry")) {
      ObjectReader block(*registry, "registry");
      c.registry.type = block.optional_string("type").value_or("ghcr");
      if (const json* ghcr = block.optional_value("ghcr")) {
        ObjectReader g(*ghcr, "registry.ghcr");
        c.registry.registry = g.optional_string("registry").value_or(c.registry.registry);
        c.registry.organization =
            g.optional_string("organization").value_or(c.registry.organization);
      }
    }
    return c;
  });
}

Result<LumeLogs> logs_from_json(const json& j) {
  return guarded<LumeLogs>([&] {
    ObjectReader r(j, "");
    return LumeLogs{r.string("info"), r.string("error")};
  });
}

Result<HostStatus> host_status_from_json(const json& j) {
  return guarded<HostStatus>([&] {
    ObjectReader r(j, "");
    HostStatus h;
    h.status = r.string("status");
    h.vm_count = r.unsigned_integer("vm_count");
    h.max_vms = r.unsigned_integer("max_vms");
    h.available_slots = r.unsigned_integer("available_slots");
    h.version = r.string("version");
    return h;
  });
}

json to_json(const CreateRequest& r) {
  json j = {{"name", r.name},
            {"os", r.os},
            {"cpu", r.cpu},
            {"memory", util::format_size(r.memory_bytes)},
            {"diskSize", util::format_size(r.disk_bytes)},
            {"display", r.display}};
  put_optional(j, "ipsw", r.ipsw);
  put_optional(j, "storage", r.storage);
  put_optional(j, "unattended", r.unattended);
  put_optional(j, "network", r.network);
  return j;
}

json to_json(const PatchRequest& r) {
  json j = json::object();
  if (r.cpu) {
    j["cpu"] = *r.cpu;
  }
  if (r.memory_bytes) {
    j["memory"] = util::format_size(*r.memory_bytes);
  }
  if (r.disk_bytes) {
    j["diskSize"] = util::format_size(*r.disk_bytes);
  }
  put_optional(j, "display", r.display);
  put_optional(j, "storage", r.storage);
  return j;
}

json to_json(const RunOptions& r) {
  json j = {{"noDisplay", r.no_display}};
  if (!r.shared_directories.empty()) {
    json dirs = json::array();
    for (const auto& d : r.shared_directories) {
      dirs.push_back({{"hostPath", d.host_path}, {"readOnly", d.read_only}});
    }
    j["sharedDirectories"] = dirs;
  }
  if (r.recovery_mode) {
    j["recoveryMode"] = true;
  }
  put_optional(j, "storage", r.storage);
  put_optional(j, "network", r.network);
  return j;
}

json to_json(const CloneRequest& r) {
  json j = {{"name", r.name}, {"newName", r.new_name}};
  put_optional(j, "sourceLocation", r.source_location);
  put_optional(j, "destLocation", r.dest_location);
  return j;
}

json to_json(const PullRequest& r) {
  json j = {{"image", r.image}, {"name", r.name}};
  put_optional(j, "registry", r.registry);
  put_optional(j, "organization", r.organization);
  put_optional(j, "storage", r.storage);
  return j;
}

json to_json(const PushRequest& r) {
  json j = {{"name", r.name}, {"imageName", r.image_name}, {"tags", r.tags}};
  put_optional(j, "registry", r.registry);
  put_optional(j, "organization", r.organization);
  put_optional(j, "storage", r.storage);
  if (r.chunk_size_mb) {
    j["chunkSizeMb"] = *r.chunk_size_mb;
  }
  if (r.single_layer) {
    j["singleLayer"] = true;
  }
  return j;
}

} // namespace lume_unlock::lume

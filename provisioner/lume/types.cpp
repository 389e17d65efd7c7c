#include "lume/types.hpp"

#include "util/json_reader.hpp"
#include "util/size.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace lume_unlock::lume {

using nlohmann::json;

namespace {

const util::JsonDocument k_body{ErrorCategory::lume_api, ""};

VmDetails read_details(const util::JsonValue& value) {
  const util::JsonObject r = value.object();
  VmDetails d;
  d.name = r.string("name");
  d.os = r.string("os");
  d.cpu_count = r.unsigned_integer("cpuCount");
  d.memory_size = r.unsigned_integer("memorySize");
  const util::JsonObject disk = r.object("diskSize");
  d.disk_size = {disk.unsigned_integer("allocated"), disk.unsigned_integer("total")};
  d.display = r.string("display");
  d.status_text = r.string("status");
  d.status = parse_status(d.status_text);
  d.provisioning_operation = r.optional_string("provisioningOperation");
  d.vnc_url = r.optional_string("vncUrl");
  d.ip_address = r.optional_string("ipAddress");
  d.ssh_available = r.optional("sshAvailable", &util::JsonValue::boolean);
  d.location_name = r.string("locationName");
  if (const auto shared = r.find("sharedDirectories")) {
    d.shared_directories = shared->json();
  }
  d.network_mode = r.string("networkMode");
  d.download_progress = r.optional("downloadProgress", &util::JsonValue::number);
  return d;
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
  return util::read_json(j, k_body, read_details);
}

Result<VmState> vm_state_from_json(const json& j) {
  return util::read_json(j, k_body, [](const util::JsonValue& value) -> VmState {
    const util::JsonObject r = value.object();
    if (r.string("status") == "pulling") {
      return PullProgress{r.string("name"),
                          r.optional("downloadProgress", &util::JsonValue::number).value_or(0)};
    }
    return read_details(value);
  });
}

Result<std::vector<VmDetails>> vm_list_from_json(const json& j) {
  return util::read_json(j, k_body, [](const util::JsonValue& value) {
    std::vector<VmDetails> out;
    for (const auto& item : value.array()) {
      out.push_back(read_details(item));
    }
    return out;
  });
}

Result<std::vector<ImageInfo>> images_from_json(const json& j) {
  return util::read_json(j, k_body, [](const util::JsonValue& value) {
    std::vector<ImageInfo> out;
    for (const auto& item : value.array()) {
      out.push_back({item.object().string("repository"), item.object().string("imageId")});
    }
    return out;
  });
}

Result<LumeConfig> config_from_json(const json& j) {
  return util::read_json(j, k_body, [](const util::JsonValue& value) {
    const util::JsonObject r = value.object();
    LumeConfig c;
    for (const auto& location : r.array("vmLocations")) {
      c.vm_locations.push_back(
          {location.object().string("name"), location.object().string("path")});
    }
    c.default_location_name = r.string("defaultLocationName");
    c.cache_directory = r.string("cacheDirectory");
    c.caching_enabled = r.boolean("cachingEnabled");
    if (const auto registry = r.find("registry")) {
      const util::JsonObject block = registry->object();
      c.registry.type = block.optional_string("type").value_or("ghcr");
      if (const auto ghcr = block.find("ghcr")) {
        const util::JsonObject g = ghcr->object();
        c.registry.registry = g.optional_string("registry").value_or(c.registry.registry);
        c.registry.organization =
            g.optional_string("organization").value_or(c.registry.organization);
      }
    }
    return c;
  });
}

Result<LumeLogs> logs_from_json(const json& j) {
  return util::read_json(j, k_body, [](const util::JsonValue& value) {
    return LumeLogs{value.object().string("info"), value.object().string("error")};
  });
}

Result<HostStatus> host_status_from_json(const json& j) {
  return util::read_json(j, k_body, [](const util::JsonValue& value) {
    const util::JsonObject r = value.object();
    return HostStatus{r.string("status"),
                      r.unsigned_integer("vm_count"),
                      r.unsigned_integer("max_vms"),
                      r.unsigned_integer("available_slots"),
                      r.string("version")};
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
  if (r.no_display && !r.vnc) {
    j["vnc"] = "disabled"; // Lume refuses it with a display (§3.8)
  }
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

namespace {

bool allowed(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

std::string describe(char c) {
  if (c == ' ') {
    return "a space";
  }
  auto byte = static_cast<unsigned char>(c);
  if (byte < 0x20 || byte >= 0x7f) {
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "0x%02x", byte);
    return std::string("byte ") + buffer;
  }
  return std::string("'") + c + "'";
}

Error name_error(std::string_view name, const std::string& why) {
  return Error(ErrorCategory::usage,
               "invalid VM name '" + std::string(name) + "'",
               why,
               "use only letters, digits, '.', '_' and '-' (for example 'ci-tahoe')");
}

} // namespace

Result<VmName> VmName::parse(std::string_view name) {
  if (name.empty()) {
    return name_error(name, "the name is empty");
  }
  if (name == "." || name == "..") {
    return name_error(name, "'.' and '..' name directories, not VMs");
  }
  if (name.front() == '-') {
    return name_error(name, "it starts with '-', which reads as an option");
  }
  if (name.size() > 255) {
    return name_error(name, "longer than 255 bytes");
  }
  for (char c : name) {
    if (!allowed(c)) {
      return name_error(name, describe(c) + " is not allowed");
    }
  }
  return VmName(std::string(name));
}

VmName::VmName(const char* literal) : VmName(parse(literal).value_or_throw()) {}

Status check_vm_name(std::string_view name) {
  LUME_UNLOCK_TRY(VmName::parse(name));
  return ok_status();
}

} // namespace lume_unlock::lume

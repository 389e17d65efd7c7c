#pragma once

#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace lume_unlock::lume {

/// VM status strings exactly as Lume 0.5.3 emits them (reference §3.1); anything else is
/// `other` and the raw text is kept in VmDetails::status_text.
enum class VmStatus { provisioning, provisioning_stale, running, stopped, pulling, other };

/// The JSON text of a status ("provisioning (stale)"); `other` gives "other".
const char* status_text(VmStatus status);
VmStatus parse_status(const std::string& text);

struct DiskSize {
  std::uint64_t allocated = 0; ///< bytes allocated on the host
  std::uint64_t total = 0;     ///< logical size of disk.img
  bool operator==(const DiskSize& o) const { return allocated == o.allocated && total == o.total; }
};

/// One VM as GET /lume/vms[/:name] describes it: all 15 keys of reference §3.1.
struct VmDetails {
  std::string name;
  std::string os;                ///< "macOS", "linux" (raw request value during create)
  std::uint64_t cpu_count = 0;   ///< cpuCount
  std::uint64_t memory_size = 0; ///< memorySize, bytes
  DiskSize disk_size;            ///< diskSize
  std::string display;           ///< "WIDTHxHEIGHT"
  VmStatus status = VmStatus::other;
  std::string status_text; ///< the raw status string
  std::optional<std::string> provisioning_operation;
  std::optional<std::string> vnc_url;
  std::optional<std::string> ip_address;
  std::optional<bool> ssh_available;
  std::string location_name;
  /// Always null from Lume 0.5.3; kept as raw JSON since its shape is unspecified.
  std::optional<nlohmann::json> shared_directories;
  std::string network_mode;
  std::optional<double> download_progress; ///< always null in full details

  /// Running, with a known guest address and an open SSH port (Lume's view, not a login test).
  bool ssh_ready() const {
    return status == VmStatus::running && ip_address.has_value() && !ip_address->empty() &&
           ssh_available.value_or(false);
  }
};

/// The synthetic three-key object GET /lume/vms/:name answers while a pull runs (§3.3).
struct PullProgress {
  std::string name;
  double download_progress = 0; ///< 0-100
};

/// What GET /lume/vms/:name answers with 200: full details, or pull progress.
using VmState = std::variant<VmDetails, PullProgress>;

/// Name and status of either alternative.
const std::string& name_of(const VmState& state);
VmStatus status_of(const VmState& state);
/// "stopped", "running (192.168.64.9, ssh open)", "pulling 42%" — for progress and errors.
std::string describe(const VmState& state);

struct SharedDirectory {
  std::string host_path;
  bool read_only = false;
};

/// POST /lume/vms (§3.4). Sizes are bytes; they are sent as Lume size strings.
struct CreateRequest {
  std::string name;
  std::string os = "macOS";
  std::uint32_t cpu = 4;
  std::uint64_t memory_bytes = 8ull << 30;
  std::uint64_t disk_bytes = 80ull << 30;
  std::string display = "1024x768";
  std::optional<std::string> ipsw; ///< "latest" or a host path; required for macOS
  std::optional<std::string> storage;
  std::optional<std::string> unattended; ///< "tahoe", "sequoia" or a host YAML path
  std::optional<std::string> network;    ///< "nat", "bridged", "bridged:en0"
};

/// PATCH /lume/vms/:name (§3.7); unset fields stay unchanged.
struct PatchRequest {
  std::optional<std::uint32_t> cpu;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> disk_bytes;
  std::optional<std::string> display;
  std::optional<std::string> storage;
};

/// POST /lume/vms/:name/run (§3.8). Headless by default: noDisplay false would open Screen
/// Sharing on the host.
struct RunOptions {
  bool no_display = true;
  /// Keep Lume's VNC listener (a recipe's `vm.display: vnc`). Otherwise a headless run sends
  /// `"vnc":"disabled"`: Lume after 0.5.3 then starts none and reports vncUrl null; 0.5.3 ignores
  /// the key and listens on all interfaces anyway (trycua/cua#3878).
  bool vnc = false;
  std::vector<SharedDirectory> shared_directories;
  bool recovery_mode = false;
  std::optional<std::string> storage;
  std::optional<std::string> network;
};

/// POST /lume/vms/clone (§3.6).
struct CloneRequest {
  std::string name;
  std::string new_name;
  std::optional<std::string> source_location;
  std::optional<std::string> dest_location;
};

/// POST /lume/pull and /lume/pull/start (§3.11, §3.12). `name` is always sent, so progress and
/// failures are reported under the VM's own name.
struct PullRequest {
  std::string image; ///< exactly "name:tag" (Lume takes no digests)
  std::string name;  ///< local VM name
  std::optional<std::string> registry;
  std::optional<std::string> organization;
  std::optional<std::string> storage;
};

/// POST /lume/vms/push (§3.13).
struct PushRequest {
  std::string name;
  std::string image_name;
  std::vector<std::string> tags;
  std::optional<std::string> registry;
  std::optional<std::string> organization;
  std::optional<std::string> storage;
  std::optional<std::uint32_t> chunk_size_mb;
  bool single_layer = false;
};

/// One entry of GET /lume/images.
struct ImageInfo {
  std::string repository;
  std::string image_id;
};

struct VmLocation {
  std::string name;
  std::string path;
};

/// The registry block of GET /lume/config: what Lume uses instead when a pull or push names
/// its defaults ghcr.io / trycua (RegistryFactory.createRegistry). Absent block: the defaults.
struct RegistrySetting {
  std::string type = "ghcr"; ///< "ghcr" (OCI) or "gcs" (not OCI)
  std::string registry = "ghcr.io";
  std::string organization = "trycua";
};

/// GET /lume/config (the parts a client needs).
struct LumeConfig {
  std::vector<VmLocation> vm_locations;
  std::string default_location_name;
  std::string cache_directory;
  bool caching_enabled = false;
  RegistrySetting registry;
};

/// GET /lume/logs (§3.19): the text of Lume's LaunchAgent stdout (`info`) and stderr (`error`)
/// logs, or Lume's "Info log file not found" / "Error log file not found" when it runs by hand.
struct LumeLogs {
  std::string info;
  std::string error;
};

/// GET /lume/host/status (§3.20).
struct HostStatus {
  std::string status;
  std::uint64_t vm_count = 0;
  std::uint64_t max_vms = 0;
  std::uint64_t available_slots = 0;
  std::string version;
};

/// Readers for Lume's bodies. They tolerate unknown keys and nulls in optional keys, and fail
/// with a message naming the key and the expected and actual JSON types. The Error they return
/// has an empty what_failed; callers add the operation.
Result<VmDetails> vm_details_from_json(const nlohmann::json& j);
Result<VmState> vm_state_from_json(const nlohmann::json& j);
Result<std::vector<VmDetails>> vm_list_from_json(const nlohmann::json& j);
Result<std::vector<ImageInfo>> images_from_json(const nlohmann::json& j);
Result<LumeConfig> config_from_json(const nlohmann::json& j);
Result<LumeLogs> logs_from_json(const nlohmann::json& j);
Result<HostStatus> host_status_from_json(const nlohmann::json& j);

/// Request bodies, with sizes written as Lume size strings.
nlohmann::json to_json(const CreateRequest& r);
nlohmann::json to_json(const PatchRequest& r);
nlohmann::json to_json(const RunOptions& r);
nlohmann::json to_json(const CloneRequest& r);
nlohmann::json to_json(const PullRequest& r);
nlohmann::json to_json(const PushRequest& r);

/// The name of a Lume VM, valid by construction. Lume itself validates nothing (lume-api.md §7):
/// the name becomes a directory name verbatim, so '/', '..', spaces, ':', '%', '?' and '#' make
/// a VM unreachable or escape its location. Accepted: [A-Za-z0-9._-], not "." or "..", not
/// starting with '-' (it would read as an option to `lume` and to our own CLI), at most 255
/// bytes (one directory name).
class VmName {
public:
  /// Checks `text`; fails with a usage error (exit 2) that quotes it and names the first bad
  /// character.
  static Result<VmName> parse(std::string_view text);

  /// A name written in the code (a literal): throws the parse error when it is not valid, so it
  /// is explicit, never a silent conversion.
  explicit VmName(const char* literal);

  const std::string& str() const { return m_name; }
  operator const std::string&() const { return m_name; }

  bool operator==(const VmName& other) const { return m_name == other.m_name; }
  bool operator!=(const VmName& other) const { return m_name != other.m_name; }

private:
  explicit VmName(std::string name) : m_name(std::move(name)) {}
  std::string m_name;
};

/// VmName::parse without keeping the value: ok, or the usage error it gives.
Status check_vm_name(std::string_view name);

} // namespace lume_unlock::lume

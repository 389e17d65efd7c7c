#pragma once

#include "lume/types.hpp"
#include "util/http_client.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::lume {

/// A VM as addressed by Lume: its name, optionally in a given storage location (a location
/// name or a directory path). Converts implicitly from a name.
struct VmRef {
  VmRef(std::string name_) : name(std::move(name_)) {}
  VmRef(const char* name_) : name(name_) {}
  VmRef(std::string name_, std::string storage_)
      : name(std::move(name_)), storage(std::move(storage_)) {}
  std::string name;
  std::optional<std::string> storage;
};

/// Lume's HTTP API (reference/lume-api.md) as typed calls. Every call fails with an Error of
/// category lume_api naming the operation, the VM, the HTTP status and Lume's message, or a
/// usage Error when a VM name is not [A-Za-z0-9._-] (checked before any request).
/// Asynchronous operations (create, run, pull_start, push) only start the work: await the
/// outcome with wait_until() (below).
class LumeApi {
public:
  virtual ~LumeApi() = default;

  /// GET /lume/vms: every VM in every location (filter on location_name yourself; Lume's
  /// ?storage= is unusable).
  virtual Result<std::vector<VmDetails>> list() = 0;
  /// GET /lume/vms/:name: details, or pull progress while a pull runs under that name.
  virtual Result<VmState> get(const VmRef& vm) = 0;
  /// Like get(), but "Virtual machine not found" is an empty optional instead of an error.
  virtual Result<std::optional<VmState>> find(const VmRef& vm) = 0;
  /// POST /lume/vms (asynchronous: the VM is `provisioning`, later `stopped` or gone).
  virtual Status create(const CreateRequest& request) = 0;
  /// PATCH /lume/vms/:name (the VM must be stopped).
  virtual Status patch(const VmRef& vm, const PatchRequest& request) = 0;
  /// POST /lume/vms/:name/run (asynchronous; errors after the answer only show as the VM never
  /// becoming `running`).
  virtual Status run(const VmRef& vm, const RunOptions& options) = 0;
  /// POST /lume/vms/:name/stop (hard power-off; Lume answers after at least 5 s).
  virtual Status stop(const VmRef& vm) = 0;
  /// DELETE /lume/vms/:name.
  virtual Status remove(const VmRef& vm) = 0;
  /// POST /lume/vms/clone.
  virtual Status clone(const CloneRequest& request) = 0;
  /// POST /lume/pull: blocks for the whole download.
  virtual Status pull(const PullRequest& request) = 0;
  /// POST /lume/pull/start (asynchronous; progress under get(request.name)).
  virtual Status pull_start(const PullRequest& request) = 0;
  /// POST /lume/vms/push (asynchronous; Lume reports the outcome only in its log).
  virtual Status push(const PushRequest& request) = 0;
  /// GET /lume/images: images in Lume's pull cache.
  virtual Result<std::vector<ImageInfo>> images() = 0;
  /// GET /lume/config.
  virtual Result<LumeConfig> config() = 0;
  /// GET /lume/logs in its query-less form (a query string answers 404, §1.4).
  virtual Result<LumeLogs> logs() = 0;
  /// GET /lume/host/status.
  virtual Result<HostStatus> host_status() = 0;
};

/// The oldest Lume lume-unlock works with: 0.5.3 is the first whose pulls rebuild images that
/// reuse a chunk digest (trycua/cua#3066). Newer ones are fine (the run request's `vnc` policy
/// is after 0.5.3); `doctor` warns below this.
inline constexpr const char* k_minimum_lume_version = "0.5.3";

struct ClientOptions {
  /// Lume's address; http only (Lume has no TLS). The CLI fills it from --lume-url /
  /// $LUME_API_URL.
  std::string base_url = "http://127.0.0.1:7777";
  std::chrono::milliseconds connect_timeout{5000};
  /// Ordinary calls. Lume runs handlers one at a time and list/get probe running VMs for
  /// seconds, so this is generous.
  std::chrono::milliseconds request_timeout{60000};
  /// stop (fixed 5 s sleep + up to 12 s of signals), PATCH (a macOS disk resize runs inside the
  /// request) and clone (copies the disk) get longer.
  std::chrono::milliseconds stop_timeout{120000};
  std::chrono::milliseconds long_timeout{3600000};
  /// A synchronous pull sends nothing until the whole image is downloaded.
  std::chrono::milliseconds pull_timeout{6 * 3600000};
  /// Extra attempts for GETs that failed without an answer or with a 5xx; never for other
  /// methods (create/run/... are not idempotent).
  int get_retries = 2;
  std::chrono::milliseconds retry_delay{200};
};

/// LumeApi over one util::HttpClient (one kept-alive connection). Not thread-safe.
class LumeClient : public LumeApi {
public:
  explicit LumeClient(ClientOptions options = {});

  Result<std::vector<VmDetails>> list() override;
  Result<VmState> get(const VmRef& vm) override;
  Result<std::optional<VmState>> find(const VmRef& vm) override;
  Status create(const CreateRequest& request) override;
  Status patch(const VmRef& vm, const PatchRequest& request) override;
  Status run(const VmRef& vm, const RunOptions& options) override;
  Status stop(const VmRef& vm) override;
  Status remove(const VmRef& vm) override;
  Status clone(const CloneRequest& request) override;
  Status pull(const PullRequest& request) override;
  Status pull_start(const PullRequest& request) override;
  Status push(const PushRequest& request) override;
  Result<std::vector<ImageInfo>> images() override;
  Result<LumeConfig> config() override;
  Result<LumeLogs> logs() override;
  Result<HostStatus> host_status() override;

  const ClientOptions& options() const { return m_options; }
  /// HTTP requests sent so far, retries included.
  std::uint64_t request_count() const { return m_http.request_count(); }

  /// One exchange after validation: the answer's JSON (null for an empty body), or the Error
  /// naming `operation` (e.g. "run of VM 'dev'"). Public for tests of the error mapping.
  struct Call {
    std::string operation;
    std::string method;
    std::string path; ///< starts with /lume/, query included where Lume allows one
    std::optional<nlohmann::json> body;
    std::vector<long> expected; ///< accepted status codes
    std::chrono::milliseconds timeout;
  };
  Result<nlohmann::json> call(const Call& call);

private:
  Result<util::HttpResponse> send_with_retries(const Call& call);
  Call make(std::string operation,
            std::string method,
            std::string path,
            std::vector<long> expected) const;

  ClientOptions m_options;
  util::HttpClient m_http;
};

/// True when Lume's error means "no such VM" (400 "Virtual machine not found: NAME").
bool is_vm_not_found(const Error& error);

/// True for Lume's sticky "Pull failed for '<name>': …" answer (lume-api.md §3.3): an earlier
/// pull under that name failed, and GET /lume/vms/NAME answers this until Lume's server restarts
/// or a new pull under the name starts, even when a VM of that name exists.
bool is_sticky_pull_failure(const Error& error);

/// The VM named `vm` as GET /lume/vms lists it, or none. The list is read from the VM
/// directories and no failed pull masks it (§3.2), so this is how a VM behind a sticky pull
/// failure is seen. Fails (lume_api) when the list cannot be read.
Result<std::optional<VmDetails>> find_listed(LumeApi& lume, const std::string& vm);

/// Where Lume keeps VM `vm` on this host, asked of Lume itself (LUME_HOME does not move Lume's
/// storage; Settings.swift): `<location path>/<vm>`, the location being the one GET
/// /lume/vms/NAME names (`locationName`, a name or a direct path), else Lume's default
/// location (GET /lume/config: `defaultLocationName` looked up by name in `vmLocations`) when
/// the VM does not exist yet or a failed pull masks it. A leading "~" is Lume's home, the same
/// user's $HOME. Fails (lume_api) when Lume cannot be asked or names a location it does not list.
Result<std::string> vm_directory(LumeApi& lume, const std::string& vm);

/// The path of Lume's default storage location (GET /lume/config), "~" expanded: where a pull
/// without `storage` puts its VM. Fails (lume_api) like vm_directory().
Result<std::string> default_location_path(LumeApi& lume);

/// Reads `<vm_dir>/.manifest-digest`, the manifest digest Lume writes after a registry pull
/// (no trailing newline). Fails (category failure) when the file is missing or unreadable,
/// naming the path.
Result<std::string> read_manifest_digest(const std::string& vm_dir);

/// Where a macOS guest automounts the directories a run request shares: Lume gives every one
/// the automount tag (VZVirtioFileSystemDeviceConfiguration.macOSGuestAutomountTag), and macOS
/// mounts that device here (docs/sources.md, "Lume's shared directories").
inline constexpr const char* k_macos_share_root = "/Volumes/My Shared Files";

/// The hidden entry Lume adds first to a macOS guest's automounted share (an empty, read-only
/// directory), so a directory of this name gets a suffix like any duplicate.
inline constexpr const char* k_live_share_placeholder = ".lume-live-share";

/// The name under which a macOS guest sees each of `shared` inside k_macos_share_root, in
/// order, as Lume 0.5.3 names the entries of its multiple-directory share: the last component
/// of the host path (Foundation's lastPathComponent; "Shared Folder" when it is empty), and a name
/// already taken gets " (2)", " (3)"… in request order, the placeholder counting as taken.
std::vector<std::string> share_entry_names(const std::vector<SharedDirectory>& shared);

/// The guest path of `relative` inside the shared directory `shared[index]`, below `root`
/// (k_macos_share_root on a real guest).
std::string guest_path_in_share(std::string_view root,
                                const std::vector<SharedDirectory>& shared,
                                std::size_t index,
                                std::string_view relative);

/// Time for wait_until, replaceable in tests.
class WaitClock {
public:
  virtual ~WaitClock() = default;
  virtual std::chrono::steady_clock::time_point now() = 0;
  virtual void sleep_for(std::chrono::milliseconds duration) = 0;
};

/// The real steady clock and std::this_thread::sleep_for.
WaitClock& system_wait_clock();

struct WaitOptions {
  /// What is awaited, for progress and errors: "VM 'dev' to be running with SSH reachable".
  std::string what;
  /// The deadline, counted from the call.
  std::chrono::milliseconds timeout{600000};
  /// Polls start at `first_interval` and grow by half each time up to `max_interval`.
  std::chrono::milliseconds first_interval{250};
  std::chrono::milliseconds max_interval{5000};
  /// Lume briefly answers "not found" while a create moves its directory into place
  /// (reference §3.4), so a VM counts as gone only after being missing this long.
  std::chrono::milliseconds vanish_grace{3000};
  util::ProgressCallback progress;
  WaitClock* clock = nullptr; ///< null = system_wait_clock()
};

using VmPredicate = std::function<bool(const VmState&)>;

/// Polls GET /lume/vms/:name until `done` holds and returns that state. Fails (lume_api) when
/// the deadline passes (naming what was awaited and the last status seen), when the VM
/// disappears (missing for longer than vanish_grace, e.g. a failed create deletes it), or when
/// a GET fails (after the client's own bounded retries). Never busy-loops.
Result<VmState>
wait_until(LumeApi& api, const VmRef& vm, const VmPredicate& done, const WaitOptions& options);

/// Common predicates.
bool is_stopped(const VmState& state);       ///< status "stopped" (create or stop finished)
bool is_running(const VmState& state);       ///< status "running"
bool is_ssh_ready(const VmState& state);     ///< running + ipAddress + sshAvailable
bool is_pull_finished(const VmState& state); ///< full details (no longer "pulling")

/// What a power change did: whether the VM had to change state, and one line for the user.
struct VmTransition {
  bool changed = true;
  std::string summary;
};

/// Starts the VM headless unless it runs already (`run` with noDisplay, `shared` as its
/// sharedDirectories, and without a VNC listener unless `vnc`), then waits until Lume reports it
/// running with an IP address and SSH open. `changed` says whether it was started. A VM that runs
/// already keeps the shares it was started with (Lume reports none, so the caller checks in the
/// guest). Fails (lume_api) when Lume refuses, the VM is still being pulled, or the deadline
/// passes.
Result<VmTransition> boot_vm(LumeApi& lume,
                             const std::string& vm,
                             std::chrono::milliseconds timeout,
                             const util::ProgressCallback& progress,
                             const std::vector<SharedDirectory>& shared = {},
                             bool vnc = false);

/// Stops the VM unless it is stopped already, and waits until Lume reports it stopped.
Result<VmTransition> stop_vm(LumeApi& lume,
                             const std::string& vm,
                             std::chrono::milliseconds timeout,
                             const util::ProgressCallback& progress);

/// A macOS VM installed by Lume from an IPSW (`POST /lume/vms`, reference §3.4), set up
/// unattended so that it has the SSH account the rest of create needs.
struct IpswInstallRequest {
  std::string vm;
  std::string ipsw;       ///< "latest" or a path on the host
  std::string unattended; ///< preset ("tahoe") or a host YAML path
  std::uint32_t cpu = 8;
  std::uint64_t memory_bytes = 16ULL << 30;
  std::uint64_t disk_bytes = 80ULL << 30;
  std::optional<std::string> display;
  /// Download, install and unattended setup take long; the deadline covers all of it.
  std::chrono::milliseconds timeout{std::chrono::hours(3)};
  /// Lume's unattended setup boots and stops the VM several times and writes no marker between
  /// the phases (reference §3.4), so "stopped" counts as finished only after it held this long.
  std::chrono::milliseconds settle{std::chrono::seconds(90)};
  util::ProgressCallback progress;
  lume::WaitClock* clock = nullptr; ///< null = the system clock (tests pass a fake one)
};

/// Asks Lume to create and install the VM, then waits: `provisioning` (the IPSW install), then
/// the unattended phases, until the VM has stayed `stopped` for `settle`. A failed install makes
/// Lume delete the VM, which the wait reports (lume_api); so does the deadline.
Result<VmTransition> install_from_ipsw(LumeApi& lume, const IpswInstallRequest& request);

} // namespace lume_unlock::lume

#pragma once

#include "lume/api.hpp"
#include "util/http_client.hpp"
#include "util/result.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace lume_unlock::lume {

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

} // namespace lume_unlock::lume

#pragma once

#include "lume/types.hpp"
#include "util/result.hpp"

#include <optional>
#include <string>
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
/// outcome with wait_until() (lume/vm_lifecycle.hpp).
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

} // namespace lume_unlock::lume

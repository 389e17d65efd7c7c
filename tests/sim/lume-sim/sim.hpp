#pragma once

#include "guest_shares.hpp"
#include "options.hpp"
#include "registry_io.hpp"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <vector>

namespace lume_sim {

/// Runs delayed background work (async create, pulls) on one thread, each task under the
/// simulator's state mutex like Lume's main-actor tasks.
class Scheduler {
public:
  explicit Scheduler(std::mutex& state_mutex);
  ~Scheduler();
  void after(std::chrono::milliseconds delay, std::function<void()> task);

private:
  struct Task {
    std::chrono::steady_clock::time_point when;
    std::uint64_t order;
    std::function<void()> run;
    bool operator>(const Task& o) const { return when != o.when ? when > o.when : order > o.order; }
  };
  void loop();
  std::mutex& m_state_mutex;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::priority_queue<Task, std::vector<Task>, std::greater<Task>> m_tasks;
  std::uint64_t m_next = 0;
  bool m_stopping = false;
  std::thread m_thread;
};

/// An answer: status, content type and body, plus an optional pause (taken without the state
/// lock, like Lume's suspending sleep in stop) before it is sent.
struct Reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::chrono::milliseconds delay_before_send{0};
  /// Work that runs after the state lock is released and produces the real answer (a
  /// synchronous pull suspends in Lume and lets other requests through, §1.5).
  std::function<Reply()> deferred;
};

/// Lume 0.5.3's HTTP API over directories under --home (reference/lume-api.md).
class Simulator {
public:
  explicit Simulator(Options options);

  /// Answers one request; `target` is the raw request-target (path + query, undecoded).
  Reply handle(const std::string& method, const std::string& target, const std::string& body);
  std::mutex& state_mutex() { return m_mutex; }

  /// The VMs stop with the process: their shares leave the guest's view. Call under
  /// state_mutex().
  void withdraw_all_shares();

  /// Compact JSON with '/' escaped as "\/", like Foundation's JSONEncoder.
  static std::string encode(const nlohmann::json& j);

private:
  struct Location {
    std::string name;
    std::filesystem::path path;
  };
  struct Found {
    std::filesystem::path dir;
    std::string location_name;
  };
  struct RunningVm {
    std::chrono::steady_clock::time_point booted_at;
    std::optional<std::string> vnc_url;
    /// The run request's sharedDirectories, as Lume keeps them for the running VM (VM.run's
    /// activeSharedDirectories) and writes them into sessions.json.
    std::vector<SharedDirectory> shared;
    GuestShareView::Exposed view; ///< with --guest-share-root
  };
  struct PullRecord {
    bool in_progress = false;
    double progress = 0;
    std::string failure;
  };
  using Params = std::vector<std::string>;
  using Handler = Reply (Simulator::*)(const Params&,
                                       const std::map<std::string, std::string>&,
                                       const std::string&);
  struct Route {
    std::string method;
    std::vector<std::string> pieces;
    Handler handler;
  };

  // Routes (reference §2), in registration order.
  Reply list_vms(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply get_vm(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply delete_vm(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply create_vm(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply clone_vm(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply patch_vm(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply run_vm(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply stop_vm(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply setup_vm(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply get_ipsw(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply pull_sync(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply pull_start(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply prune(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply list_images(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply get_config(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply post_config(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply
  list_locations(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply add_location(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply
  remove_location(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply get_logs(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply set_default_location(const Params&,
                             const std::map<std::string, std::string>&,
                             const std::string&);
  Reply push(const Params&, const std::map<std::string, std::string>&, const std::string&);
  Reply host_status(const Params&, const std::map<std::string, std::string>&, const std::string&);

  // Lookups and state.
  std::optional<Found>
  find_vm(const std::string& name, const std::optional<std::string>& storage, std::string& error);
  std::optional<Found> resolve_storage(const std::optional<std::string>& storage,
                                       std::string& error);
  nlohmann::json details(const Found& vm);
  std::string status_of(const std::filesystem::path& dir);
  bool is_running(const std::filesystem::path& dir) const;
  std::size_t running_count() const;
  /// --guest-disks: the VM's guest home into the shared home before a run (false: the run
  /// fails, logged), and back onto the VM's disk at a stop.
  bool load_guest_disk(const std::filesystem::path& dir, const std::string& vm);
  void save_guest_disk(const std::filesystem::path& dir, const std::string& vm);
  static constexpr const char* k_guest_disk = "guest-home.tar";
  void start_vm(const std::string& name,
                const std::optional<std::string>& storage,
                bool vnc_enabled,
                const std::vector<SharedDirectory>& shared);
  /// Takes the running VM's shares out of the guest's view (--guest-share-root), if any.
  void withdraw_shares(RunningVm& run);
  void finish_create(const std::filesystem::path& dir, bool fail);
  void fail_pull(const std::string& key, const std::string& why);
  /// The pull itself, run without the state lock (it takes it for every state change). Returns
  /// the failure text, empty on success.
  std::string run_pull(const std::string& key,
                       const std::string& image,
                       const std::optional<std::string>& name,
                       const std::optional<std::string>& registry,
                       const std::optional<std::string>& organization,
                       const std::optional<std::string>& storage);
  /// With --guest-home: replaces the home's contents when the pulled disk.img in `staging` is
  /// a guest-home archive. Throws RegistryFailure (and removes `staging`) when it is unsafe.
  void restore_guest_home_from(const std::filesystem::path& staging, const std::string& key);
  void log(const std::string& line) const;
  /// Lume's own stdout (print): to stdout and, with --log-dir, to DIR/lume_daemon.log.
  void lume_print(const std::string& line) const;
  /// Logger.error's line format, through lume_print.
  void lume_logger_error(const std::string& message) const;
  /// --registry / --registry-organization as config.yaml's registry block.
  ConfiguredRegistry configured_registry() const;
  mutable std::mutex m_print_mutex;

  Options m_options;
  std::mutex m_mutex;
  std::vector<Route> m_routes;
  std::vector<Location> m_locations;
  std::string m_default_location = "home";
  std::string m_cache_directory;
  bool m_caching_enabled = false;
  std::map<std::string, RunningVm> m_running; ///< key: VM directory
  std::map<std::string, PullRecord> m_pulls;  ///< key: the raw pull key (§3.11)
  int m_next_vnc_port = 5901;
  Scheduler m_scheduler;
};

} // namespace lume_sim

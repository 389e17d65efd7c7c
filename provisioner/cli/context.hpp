#pragma once

#include "guest/ssh_session.hpp"
#include "lume/client.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace lume_unlock::cli {

enum class Verbosity { quiet, normal, verbose };

/// Options that every command accepts before its name (DESIGN §9).
struct GlobalOptions {
  std::string lume_url;  ///< --lume-url, $LUME_API_URL, default http://127.0.0.1:7777
  std::string state_dir; ///< --state-dir, $LUME_UNLOCK_STATE_DIR, default ~/.lume-unlock
  /// --lock-timeout: how long a command that changes a VM waits for another run on the same VM
  /// (pipeline::lock_vm) before it gives up.
  std::chrono::milliseconds lock_timeout{std::chrono::seconds(60)};
  /// --mirror FROM=TO (repeatable), after $LUME_UNLOCK_MIRROR and $HF_ENDPOINT: where install:
  /// artifacts are fetched from (fetch::MirrorMap).
  std::vector<std::string> mirrors;
  bool json = false;
  Verbosity verbosity = Verbosity::normal;
};

/// What a command runs with: the global options and where output goes. Commands write results
/// to `out` (one JSON document with --json) and diagnostics to `err`.
class Context {
public:
  Context(std::ostream& out, std::ostream& err, bool out_is_terminal, bool err_is_terminal);

  GlobalOptions global;
  std::ostream& out;
  std::ostream& err;
  bool out_is_terminal;
  bool err_is_terminal;
  /// What run_cli returns when the command ends without an Error (commands.hpp).
  int exit_status = 0;
  /// Colours only on a terminal and when NO_COLOR is unset.
  bool color() const;

  bool json() const { return global.json; }
  bool quiet() const { return global.verbosity == Verbosity::quiet; }
  bool verbose() const { return global.verbosity == Verbosity::verbose; }

  /// Writes a JSON document to `out` (indented, newline-terminated).
  void print_json(const nlohmann::json& document) const;
  /// A diagnostic line on `err`, unless --quiet.
  void note(const std::string& line) const;
  /// A debug line on `err`, only with --verbose.
  void debug(const std::string& line) const;
  /// A warning on `err` ("warning: ..."), shown even with --quiet.
  void warn(const std::string& line) const;

  /// The one-writer lock of `vm` for `command` ("allow add"), held by the caller until it
  /// returns: pipeline::lock_vm with --state-dir and --lock-timeout. Nothing for a dry run, which
  /// changes nothing. Throws Error when the VM stays busy or the state directory is read-only.
  std::optional<util::FileLock>
  lock_vm(const std::string& vm, const std::string& command, bool dry_run = false) const;

  /// The one Lume client of this run (--lume-url), made on first use, so every request of a
  /// command goes over one connection and is counted together.
  lume::LumeClient& lume() const;

  /// Opens the SSH session to a VM's guest, the one way every guest-reaching command does it:
  /// the name checked ('-rf' is refused here), the address from Lume (waiting until it reports
  /// an IP and SSH), then SshSession::connect (password from the environment on first contact,
  /// then the per-VM key; host key pinned in the state directory).
  std::unique_ptr<guest::SshSession> open_guest(const std::string& vm,
                                                const guest::ConnectionOptions& connection) const;

  /// With --verbose: "SSH commands: N, Lume requests: M" of this run (`ssh_commands` of the
  /// session, when there was one).
  void debug_counts(std::uint64_t ssh_commands) const;

  /// Renders an error: "lume-unlock: error: ..." plus "hint: ..." on `err`, or with --json one
  /// object {"error": {...}} on `out`. Returns the category's exit code.
  int report(const Error& error) const;

private:
  mutable std::unique_ptr<lume::LumeClient> m_lume;
};

/// The JSON form of an error, as printed under --json.
nlohmann::json error_to_json(const Error& error);

} // namespace lume_unlock::cli

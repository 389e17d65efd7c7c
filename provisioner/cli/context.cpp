#include "context.hpp"

#include "apply/guest_access.hpp"
#include "lume/types.hpp"
#include "pipeline/vm_state.hpp"
#include "util/text_check.hpp"

#include <cstdlib>

namespace lume_unlock::cli {

Context::Context(std::ostream& out_stream,
                 std::ostream& err_stream,
                 bool out_terminal,
                 bool err_terminal)
    : out(out_stream), err(err_stream), out_is_terminal(out_terminal),
      err_is_terminal(err_terminal) {}

lume::LumeClient& Context::lume() const {
  if (!m_lume) {
    lume::ClientOptions options;
    options.base_url = global.lume_url;
    m_lume = std::make_unique<lume::LumeClient>(options);
  }
  return *m_lume;
}

std::unique_ptr<guest::SshSession>
Context::open_guest(const std::string& vm, const guest::ConnectionOptions& connection) const {
  lume::VmName::parse(vm).value_or_throw();
  const std::string host = apply::LumeGuestAddressResolver(lume()).resolve(vm).value_or_throw();
  debug("guest of VM '" + vm + "' at " + host + ":" + std::to_string(connection.port));
  auto session =
      guest::SshSession::connect(guest::session_options(connection, vm, host, global.state_dir))
          .value_or_throw();
  if (session->installed_key()) {
    note("installed the per-VM SSH key in the guest; later logins use it");
  }
  return session;
}

void Context::debug_counts(std::uint64_t ssh_commands) const {
  debug("SSH commands: " + std::to_string(ssh_commands) +
        ", Lume requests: " + std::to_string(lume().request_count()));
}

bool Context::color() const {
  const char* no_color = std::getenv("NO_COLOR");
  return err_is_terminal && (no_color == nullptr || *no_color == '\0');
}

std::optional<util::FileLock>
Context::lock_vm(const std::string& vm, const std::string& command, bool dry_run) const {
  if (dry_run) {
    return std::nullopt;
  }
  const lume::VmName name = lume::VmName::parse(vm).value_or_throw();
  debug("waiting for the lock of VM '" + vm + "' (" +
        pipeline::vm_lock_path(global.state_dir, name) + ")");
  return pipeline::lock_vm(global.state_dir, name, command, global.lock_timeout);
}

void Context::print_json(const nlohmann::json& document) const {
  // Outside text may hold invalid UTF-8; dump escapes controls and replaces what is invalid.
  out << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

void Context::note(const std::string& line) const {
  if (!quiet()) {
    err << util::display_text(line) << '\n';
  }
}

void Context::debug(const std::string& line) const {
  if (verbose()) {
    err << "debug: " << util::display_text(line) << '\n';
  }
}

void Context::warn(const std::string& line) const {
  err << (color() ? "\033[33mwarning:\033[0m " : "warning: ") << util::display_text(line) << '\n';
}

nlohmann::json error_to_json(const Error& error) {
  nlohmann::json body = {
      {"category", category_name(error.category())},
      {"exit_code", exit_code(error.category())},
      {"message", error.message()},
  };
  if (!error.hint().empty()) {
    body["hint"] = error.hint();
  }
  return {{"error", body}};
}

int Context::report(const Error& error) const {
  if (json()) {
    print_json(error_to_json(error));
  } else {
    err << (color() ? "lume-unlock: \033[31merror:\033[0m " : "lume-unlock: error: ")
        << error.message() << '\n';
    if (!error.hint().empty()) {
      err << "hint: " << error.hint() << '\n';
    }
  }
  return exit_code(error.category());
}

} // namespace lume_unlock::cli

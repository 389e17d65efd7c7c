#include "cli/guest_connection.hpp"

#include "guest/interim_lume_address_resolver.hpp"

namespace lume_unlock::cli {

std::unique_ptr<guest::GuestAddressResolver> make_address_resolver(const Context& context) {
  return std::make_unique<guest::InterimLumeAddressResolver>(context.global.lume_url);
}

std::unique_ptr<guest::SshSession> connect_guest(const std::string& vm,
                                                 const guest::ConnectionOptions& options,
                                                 Context& context) {
  const std::string host = make_address_resolver(context)->resolve(vm).value_or_throw();
  context.debug("guest of VM '" + vm + "' at " + host + ":" + std::to_string(options.port));
  auto session =
      guest::SshSession::connect(guest::session_options(options, vm, host, context.global.state_dir))
          .value_or_throw();
  if (session->installed_key()) {
    context.note("installed the per-VM SSH key in the guest; later logins use it");
  }
  return session;
}

} // namespace lume_unlock::cli

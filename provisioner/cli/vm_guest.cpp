#include "vm_guest.hpp"

#include "apply/guest_access.hpp"
#include "lume/client.hpp"
#include "lume/types.hpp"

namespace lume_unlock::cli {

std::unique_ptr<guest::SshSession> connect_vm_guest(const Context& context,
                                                    const std::string& vm,
                                                    const guest::ConnectionOptions& connection) {
  lume::ClientOptions lume_options;
  lume_options.base_url = context.global.lume_url;
  lume::LumeClient lume_client(lume_options);
  return connect_vm_guest(context, vm, connection, lume_client);
}

std::unique_ptr<guest::SshSession> connect_vm_guest(const Context& context,
                                                    const std::string& vm,
                                                    const guest::ConnectionOptions& connection,
                                                    lume::LumeApi& lume) {
  // The edge for every command that reaches a guest by VM name: '-rf' is refused here.
  lume::VmName::parse(vm).value_or_throw();
  apply::LumeGuestAddressResolver resolver(lume);
  const std::string host = resolver.resolve(vm).value_or_throw();
  context.debug("guest of VM '" + vm + "' at " + host + ":" + std::to_string(connection.port));
  auto session = guest::SshSession::connect(
                     guest::session_options(connection, vm, host, context.global.state_dir))
                     .value_or_throw();
  if (session->installed_key()) {
    context.note("installed the per-VM SSH key in the guest; later logins use it");
  }
  return session;
}

} // namespace lume_unlock::cli

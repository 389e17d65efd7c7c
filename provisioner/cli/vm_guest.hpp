#pragma once

#include "cli/context.hpp"
#include "guest/ssh_session.hpp"
#include "lume/api.hpp"

#include <memory>
#include <string>

namespace lume_unlock::cli {

/// Opens the SSH session to a VM's guest, the one way every guest-reaching command does it:
/// the address from Lume (waiting until it reports an IP and SSH), then SshSession::connect with
/// the connection options (password from the environment on first contact, then the per-VM key;
/// host key pinned in the state directory). Notes the key installation on first contact.
std::unique_ptr<guest::SshSession> connect_vm_guest(const Context& context,
                                                    const std::string& vm,
                                                    const guest::ConnectionOptions& connection);

/// The same through a Lume client the caller already holds (so one command's Lume requests go
/// over one connection and are counted together).
std::unique_ptr<guest::SshSession> connect_vm_guest(const Context& context,
                                                    const std::string& vm,
                                                    const guest::ConnectionOptions& connection,
                                                    lume::LumeApi& lume);

} // namespace lume_unlock::cli

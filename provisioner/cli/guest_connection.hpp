#pragma once

#include "cli/context.hpp"
#include "guest/address_resolver.hpp"
#include "guest/connection_options.hpp"
#include "guest/ssh_session.hpp"

#include <memory>
#include <string>

namespace lume_unlock::cli {

/// The one place the CLI decides how a VM name becomes a guest address (today the interim
/// Lume lookup; swap in the real Lume client's resolver here).
std::unique_ptr<guest::GuestAddressResolver> make_address_resolver(const Context& context);

/// Resolves `vm`'s address and connects to its guest with `options` (password from the
/// environment, per-VM key, pinned host key). Throws Error on failure.
std::unique_ptr<guest::SshSession> connect_guest(const std::string& vm,
                                                 const guest::ConnectionOptions& options,
                                                 Context& context);

} // namespace lume_unlock::cli

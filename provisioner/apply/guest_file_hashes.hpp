#pragma once

#include "guest/session.hpp"
#include "util/result.hpp"

#include <map>
#include <string>
#include <vector>

namespace lume_unlock::apply {

/// The sha256 of each of `paths` in the guest, with ONE `shasum -a 256` command (every path
/// through guest::shell_join). A file that is missing or unreadable is absent from the map. No
/// command runs for an empty list.
Result<std::map<std::string, std::string>> hash_guest_files(guest::GuestSession& session,
                                                            const std::vector<std::string>& paths);

} // namespace lume_unlock::apply

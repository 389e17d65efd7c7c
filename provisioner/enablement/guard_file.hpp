#pragma once

#include "enablement/enablement_list.hpp"

#include <string>

namespace lume_unlock::enablement {

/// The guard file (DESIGN §4.1, LUME_UNLOCK_ENABLEMENT): a '#' header, then the program of every
/// entry (agents and exec-only alike), one absolute path per line, sorted bytewise, without
/// duplicates, each line ending in '\n'. The shim activates only in a process whose resolved
/// executable path is listed. Expects a validated list (no newline can be in a program).
std::string render_guard_file(const EnablementList& list);

} // namespace lume_unlock::enablement

#pragma once

#include "enablement/enablement_list.hpp"

#include <string>

namespace lume_unlock::enablement {

/// The guard file (DESIGN §4.1, LUME_UNLOCK_ENABLEMENT): a '#' header, then the guarded_path of
/// every entry (agents and exec-only alike) — its resolved_program, the real path with every
/// symbolic link resolved — one absolute path per line, sorted bytewise, without duplicates, each
/// line ending in '\n'. The shim activates only in a process whose realpath(3) of the executable
/// is listed, so a link's own path (Homebrew's bin/, a venv's python, /tmp) would never match;
/// an entry without resolved_program (a list applied before resolution existed) lists its
/// program. Expects a validated list (no newline can be in a path).
std::string render_guard_file(const EnablementList& list);

} // namespace lume_unlock::enablement

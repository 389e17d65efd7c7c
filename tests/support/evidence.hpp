#pragma once
// The published evidence (llama.cpp logs and llama-bench JSON from a real M1 Ultra guest and
// host) lives outside the repository, read-only, in ../shared/fixtures/evidence beside the
// source tree (or ../../shared for a nested worktree). Tests that read it skip when it is absent.

#include <optional>
#include <string>

namespace lume_unlock::test {

/// The path of the evidence file named `name` (searched by file name), or empty when the
/// evidence is not on this machine.
std::optional<std::string> find_evidence(const std::string& name);

/// Where find_evidence looked, for a skip message ("A or B").
std::string evidence_places();

} // namespace lume_unlock::test

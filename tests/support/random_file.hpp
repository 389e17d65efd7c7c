#pragma once
// Incompressible test files for the transfer benchmarks.
#include <cstdint>
#include <string>

namespace lume_unlock::test {

/// Writes `mib` MiB of incompressible bytes (so nobody wins by compressing), 1 MiB at a time,
/// from a generator seeded with `seed`; returns their SHA-256 (hex).
std::string write_random_file(const std::string& path, std::uint64_t mib, std::uint64_t seed);

} // namespace lume_unlock::test

#pragma once
// What the transfer benchmarks share: incompressible test files and their --mib argument.
#include <cstdint>
#include <string>

namespace lume_unlock::test {

/// Writes `mib` MiB of incompressible bytes (so nobody wins by compressing), 1 MiB at a time,
/// from a generator seeded with `seed`; returns their SHA-256 (hex).
std::string write_random_file(const std::string& path, std::uint64_t mib, std::uint64_t seed);

/// A benchmark's command line: nothing, or `--mib N`. Prints "usage: PROGRAM [--mib N]" and exits
/// 2 on anything else.
std::uint64_t
mib_argument(int argc, char** argv, const std::string& program, std::uint64_t fallback);

} // namespace lume_unlock::test

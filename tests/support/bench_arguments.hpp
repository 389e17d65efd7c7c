#pragma once
// The command line every transfer benchmark takes: `--mib N` (the size moved) and `--runs N`
// (rounds per side; the figures are their medians). ctest's smoke runs ask for one round.
#include <cstdint>
#include <string>

namespace lume_unlock::test {

struct BenchArguments {
  std::uint64_t mib = 256;
  int runs = 5;
};

/// Reads `--mib N` (N > 0) and `--runs N` (1..99) over `defaults`. Prints
/// "usage: PROGRAM [--mib N] [--runs N]" and exits 2 on anything else.
BenchArguments
parse_bench_arguments(int argc, char** argv, const std::string& program, BenchArguments defaults);

} // namespace lume_unlock::test

#include "support/bench_arguments.hpp"

#include <cstdlib>
#include <iostream>

namespace lume_unlock::test {

BenchArguments
parse_bench_arguments(int argc, char** argv, const std::string& program, BenchArguments defaults) {
  BenchArguments arguments = defaults;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    const unsigned long long value = i + 1 < argc ? std::strtoull(argv[i + 1], nullptr, 10) : 0;
    if (flag == "--mib" && value > 0) {
      arguments.mib = value;
    } else if (flag == "--runs" && value > 0 && value < 100) {
      arguments.runs = static_cast<int>(value);
    } else {
      std::cerr << "usage: " << program << " [--mib N] [--runs N]\n";
      std::exit(2);
    }
  }
  return arguments;
}

} // namespace lume_unlock::test

#include "verify/bench_request.hpp"

namespace lume_unlock::verify {

std::vector<std::string> llama_bench_flags(const BenchRequest& request) {
  std::vector<std::string> flags = {"-p",
                                    std::to_string(request.prompt),
                                    "-n",
                                    std::to_string(request.gen),
                                    "-r",
                                    std::to_string(request.repetitions)};
  if (request.threads) {
    flags.insert(flags.end(), {"-t", std::to_string(*request.threads)});
  }
  if (request.gpu_layers) {
    flags.insert(flags.end(), {"-ngl", std::to_string(*request.gpu_layers)});
  }
  flags.insert(flags.end(), {"-o", "json"});
  return flags;
}

} // namespace lume_unlock::verify

#pragma once
// The bench world of the create --bench, bake --bench and report tests: PipelineWorld whose
// recipe installs the llama-bench stand-in release and a model file (install:, as a real
// image holds no llama.cpp) and benches with a bench: block.
#include "pipeline_fixture.hpp"

#include <string>
#include <vector>

namespace lume_unlock::test {

class BenchPipeline : public PipelineWorld {
protected:
  /// Starts the world with llama.cpp to install and a recipe that benches with `bench` (YAML
  /// flow mapping entries).
  void start_bench_world(const std::string& bench) {
    start_world();
    prepare_llama_cpp_release();
    write_bench_recipe(bench);
  }

  /// `lume-unlock --json bake RECIPE --push TARGET --name vm1 … --bench EXTRA…`.
  CliRun bake_with_bench(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> command = {"bake",
                                        recipe,
                                        "--push",
                                        target(),
                                        "--name",
                                        "vm1",
                                        "--bundle",
                                        SHIM_BUNDLE_DIR,
                                        "--ssh-wait",
                                        "2",
                                        "--bench"};
    command.insert(command.end(), extra.begin(), extra.end());
    return cli(command, true, {"--json"});
  }

  static std::string fixture(const std::string& name) {
    return std::string(LUME_UNLOCK_FIXTURES) + "/llama-bench/" + name;
  }

  std::string target(const std::string& tag = "1") const {
    return registry->host() + "/acme/tahoe-llm:" + tag;
  }
};

} // namespace lume_unlock::test

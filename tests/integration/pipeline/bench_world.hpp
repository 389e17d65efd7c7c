#pragma once
// The bench world of the create --bench, bake --bench and report tests: PipelineWorld with the
// llama-bench stand-in (tests/sim/llama-bench) and a model file in the guest, and a recipe
// with a bench: block.
#include "pipeline_fixture.hpp"
#include "support/file_io.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace lume_unlock::test {

class BenchPipeline : public PipelineWorld {
protected:
  /// Starts the world, puts the stand-in (with libMetalEmu.so and the composed replays: 10.0x
  /// pp512, 12.0x tg128) and a model file into the guest's home, and writes a recipe that
  /// enables it and benches with `bench` (YAML flow mapping entries).
  void start_bench_world(const std::string& bench) {
    start_world();
    const std::filesystem::path bin = guest.info().home + "/llama.cpp/bin";
    std::filesystem::create_directories(bin / "llama-bench-replay");
    const std::filesystem::path built = LLAMA_BENCH_SIM_BINARY;
    std::filesystem::copy_file(
        built, bin / "llama-bench", std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(built.parent_path() / "libMetalEmu.so",
                               bin / "libMetalEmu.so",
                               std::filesystem::copy_options::overwrite_existing);
    write_file(bin / "llama-bench-replay/stock.json", slurp(fixture("guest-stock.json")));
    write_file(bin / "llama-bench-replay/unlocked.json", slurp(fixture("guest-unlocked.json")));
    llama_bench = (bin / "llama-bench").string();
    std::filesystem::create_directories(guest.info().home + "/models");
    model = guest.info().home + "/models/composed 1B.gguf";
    write_file(model, "GGUF not really a model");
    write_bench_recipe(bench);
  }

  void write_bench_recipe(const std::string& bench) {
    std::string yaml = slurp(recipe);
    yaml += "  - name: llama-bench\n    program: " + llama_bench + "\n    agent: false\n";
    yaml += "bench: {model: \"" + model + "\"" + (bench.empty() ? "" : ", " + bench) + "}\n";
    write_file(recipe, yaml, 0644);
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

  static const nlohmann::json* step(const nlohmann::json& doc, const std::string& id) {
    if (!doc.contains("steps")) {
      return nullptr;
    }
    for (const auto& s : doc["steps"]) {
      if (s["id"] == id) {
        return &s;
      }
    }
    return nullptr;
  }

  std::string target(const std::string& tag = "1") const {
    return registry->host() + "/acme/tahoe-llm:" + tag;
  }

  std::string llama_bench;
  std::string model;
};

} // namespace lume_unlock::test

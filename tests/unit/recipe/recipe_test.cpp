#include "enablement/enablement_list.hpp"
#include "recipe/recipe.hpp"
#include "recipe_errors.hpp"
#include "support/file_io.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace lume_unlock::recipe {
namespace {

const char* const k_good = R"(source:
  image: ghcr.io/trycua/macos-tahoe-cua:latest
vm:
  cpu: 8
  memory: 16GB
  disk: 80GB
  display: 1920x1080
guest:
  user: lume
shim:
  profile: {apple_family_max: 1009, max_threadgroup_memory: 65536}
enablement:
  - name: llama-server
    program: /opt/llama.cpp/bin/llama-server
)";

TEST(Recipe, ParsesEveryField) {
  auto r = parse_recipe(k_good, "r.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message();
  const Recipe& recipe = r.value();
  EXPECT_EQ(recipe.source.image, "ghcr.io/trycua/macos-tahoe-cua:latest");
  EXPECT_EQ(recipe.vm.cpu, 8);
  EXPECT_EQ(recipe.vm.memory_bytes, 17179869184ULL);
  EXPECT_EQ(recipe.vm.disk_bytes, 80ULL << 30);
  EXPECT_EQ(recipe.vm.display, "1920x1080");
  EXPECT_FALSE(recipe.vm.vnc); // headless: runs start without Lume's VNC listener
  EXPECT_EQ(recipe.guest.user, "lume");
  EXPECT_EQ(recipe.shim.profile.apple_family_max, 1009);
  EXPECT_EQ(recipe.shim.profile.max_threadgroup_memory, 65536u);
  ASSERT_EQ(recipe.enablement.entries.size(), 1u);
  EXPECT_EQ(recipe.enablement.entries[0].program, "/opt/llama.cpp/bin/llama-server");
  EXPECT_EQ(recipe.sha256.size(), 64u);
}

TEST(Recipe, DefaultsAreEightCpusAndSixteenGigabytes) {
  auto r = parse_recipe("source: {image: a.io/b/c:1}\n", "r.yaml");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().vm.cpu, 8);
  EXPECT_EQ(r.value().vm.memory_bytes, 16ULL << 30);
  EXPECT_FALSE(r.value().vm.disk_bytes.has_value());
  EXPECT_EQ(r.value().shim.profile, (enablement::Profile{1009, 65536}));
  EXPECT_TRUE(r.value().install.empty());
}

struct BadCase {
  const char* name;
  const char* text;
  const char* message;
};

TEST(Recipe, RejectsBadInputWithFileLineAndColumn) {
  const BadCase cases[] = {
      {"memory without B",
       "source: {image: a.io/b/c:1}\nvm:\n  memory: 16G\n",
       "r.yaml:3:11: vm.memory: '16G': unknown unit (use TB, GB, MB, KB or b) | hint: "
       "write it like 16GB or 8192MB (units: TB, GB, MB, KB, B)"},
      {"memory without unit",
       "source: {image: a.io/b/c:1}\nvm:\n  memory: 16\n",
       "r.yaml:3:11: vm.memory: '16' has no unit | hint: write it like 16GB or 8192MB (units: TB, "
       "GB, "
       "MB, KB, B)"},
      {"cpu zero",
       "source: {image: a.io/b/c:1}\nvm: {cpu: 0}\n",
       "r.yaml:2:11: vm.cpu: 0 is out of range (1 to 64)"},
      {"cpu as text",
       "source: {image: a.io/b/c:1}\nvm: {cpu: eight}\n",
       "r.yaml:2:11: vm.cpu: 'eight' is not a whole number from 1 to 64"},
      {"unknown key with suggestion",
       "source: {image: a.io/b/c:1}\nvm: {memroy: 16GB}\n",
       "r.yaml:2:6: vm.memroy: unknown key | hint: did you mean 'memory'? (known keys here: cpu, "
       "memory, disk, display)"},
      {"unknown top-level key",
       "source: {image: a.io/b/c:1}\nimages: []\n",
       "r.yaml:2:1: images: unknown key | hint: known keys here: source, vm, guest, shim, "
       "trust, registry, bench, install, enablement"},
      {"empty trust keys",
       "source: {image: a.io/b/c:1}\ntrust: {keys: []}\n",
       "r.yaml:2:15: trust.keys: must be a non-empty list of public keys | hint: each entry: a "
       ".pub path relative to the recipe, or an inline -----BEGIN PUBLIC KEY----- block"},
      {"vm not a mapping",
       "source: {image: a.io/b/c:1}\nvm: 8\n",
       "r.yaml:2:5: vm: must be a mapping of keys to values"},
      {"both sources",
       "source: {image: a.io/b/c:1, ipsw: latest}\n",
       "r.yaml:1:9: source: needs exactly one of 'image' or 'ipsw'"},
      {"no source",
       "vm: {cpu: 4}\n",
       "r.yaml: source: is required | hint: add 'source: {image: "
       "ghcr.io/trycua/macos-tahoe-cua:latest}'"},
      {"ceiling out of range",
       "source: {image: a.io/b/c:1}\nshim: {profile: {apple_family_max: 5001}}\n",
       "r.yaml:2:36: shim.profile.apple_family_max: 5001 is out of range (1001 to 1999)"},
      {"bad display",
       "source: {image: a.io/b/c:1}\nvm: {display: big}\n",
       "r.yaml:2:15: vm.display: 'big' is neither WIDTHxHEIGHT nor 'vnc' | hint: for example "
       "1920x1080, or vnc to keep Lume's VNC listener"},
      {"enablement not a list",
       "source: {image: a.io/b/c:1}\nenablement: {a: 1}\n",
       "r.yaml:2:13: enablement: must be a list of entries"},
      {"relative program path",
       "source: {image: a.io/b/c:1}\nenablement:\n  - {name: x, program: bin/x}\n",
       "r.yaml:3:24: enablement entry 'x': program 'bin/x' is not an absolute path | hint: give "
       "the "
       "program's full path in the guest, e.g. '/opt/llama.cpp/bin/llama-server'"},
      {"duplicate entry names",
       "source: {image: a.io/b/c:1}\nenablement:\n  - {name: x, program: /a}\n  - {name: x, "
       "program: /b}\n",
       "r.yaml:4:12: enablement entry 'x': name is used twice (entries 1 and 2) | hint: give every "
       "entry its own name"},
      {"not a macOS version",
       "source: {image: a.io/b/c:1, macos: 26.5.x}\n",
       "r.yaml:1:36: source.macos: '26.5.x' is not a macOS version (26.5.2)"},
      {"invalid yaml", "source: [\n", "r.yaml:2:1: invalid YAML: end of sequence flow not found"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(error_of(c.text), c.message) << c.name;
  }
}

TEST(Recipe, AnEnablementListReadsTheSameInARecipeAndAlone) {
  // One walk, one error format: the same mistake reads the same whichever file holds it.
  for (const std::string entry : {"{name: a, program: /bin/a, agent: maybe}",
                                  "{name: a, progam: /bin/a}",
                                  "{name: a, program: /bin/a, profile: {apple_family_max: 2000}}",
                                  "{name: a, program: bin/a}"}) {
    const std::string list = "enablement:\n  - " + entry + "\n";
    const auto alone = enablement::parse_enablement_yaml(list, "r.yaml");
    const auto in_recipe = parse_recipe(list + "source: {image: a.io/b/c:1}\n", "r.yaml");
    ASSERT_FALSE(alone.ok()) << entry;
    ASSERT_FALSE(in_recipe.ok()) << entry;
    EXPECT_EQ(in_recipe.error().message(), alone.error().message());
    EXPECT_EQ(in_recipe.error().hint(), alone.error().hint());
  }
}

TEST(Recipe, NumbersDisplaysAndAccountNamesFollowTheirExactShapes) {
  const auto accepted = [](const std::string& vm_and_guest) {
    auto r = parse_recipe("source: {image: a.io/b/c:1}\n" + vm_and_guest, "r.yaml");
    return r.ok() ? std::string("ok") : r.error().message();
  };
  for (const std::string& good :
       std::vector<std::string>{"vm: {cpu: 8}\n",
                                "vm: {cpu: 0x8}\n",
                                "vm: {cpu: 0x0000000000008}\n",
                                "vm: {display: 1920x1080}\n",
                                "vm: {display: 10x99999}\n",
                                "guest: {user: lume}\n",
                                "guest: {user: _svc.x-1}\n",
                                "guest: {user: " + std::string(32, 'a') + "}\n"}) {
    EXPECT_EQ(accepted(good), "ok") << good;
  }
  for (const std::string& bad :
       std::vector<std::string>{"vm: {cpu: 08}\n",
                                "vm: {cpu: 0x}\n",
                                "vm: {cpu: 0x0000000000000008}\n",
                                "vm: {cpu: 1234567890123456789}\n",
                                "vm: {cpu: -1}\n",
                                "vm: {cpu: 8.0}\n",
                                "vm: {display: 1x1080}\n",
                                "vm: {display: 01920x1080}\n",
                                "vm: {display: 123456x10}\n",
                                "vm: {display: 1920x1080x2}\n",
                                "vm: {display: 1920X1080}\n",
                                "guest: {user: Lume}\n",
                                "guest: {user: 1lume}\n",
                                "guest: {user: " + std::string(33, 'a') + "}\n"}) {
    EXPECT_NE(accepted(bad), "ok") << bad;
  }
  EXPECT_NE(accepted("vm: {display: VNC}\n"), "ok");
  EXPECT_NE(accepted("vm: {display: vnc:5900}\n"), "ok");
  // A 100k-character value is refused at once (std::regex recursed per character).
  EXPECT_NE(accepted("vm: {display: " + std::string(100000, '1') + "x10}\n"), "ok");
}

// The shipped recipes reproduce the published runs: the facts below are the publishers'
// (docs/sources.md), so a change to a recipe that drifts from them fails here.
void expect_published_run(const std::string& file,
                          const std::string& model_url,
                          const std::string& model_sha256,
                          const std::map<std::string, double>& speedup,
                          const std::map<std::string, double>& host_ratio) {
  auto r = load_recipe(std::string(LUME_UNLOCK_SOURCE_DIR) + "/image-recipes/" + file);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r.value().source.image,
            "ghcr.io/trycua/macos-tahoe-cua:26.5.2@sha256:"
            "ed1783e80e08e888889b54a8c0387105a37fbcfc995079f76db48e2280081487");
  EXPECT_EQ(r.value().source.macos, "26.5.2") << "the macOS of that image";
  EXPECT_EQ(r.value().vm.cpu, 8);
  EXPECT_EQ(r.value().vm.memory_bytes, 16ULL << 30);
  EXPECT_EQ(r.value().shim.profile, (enablement::Profile{1009, 65536}));
  ASSERT_EQ(r.value().install.size(), 2u);
  const InstallItem& llama = r.value().install[0];
  EXPECT_EQ(llama.source.text,
            "https://github.com/ggml-org/llama.cpp/releases/download/b10167/"
            "llama-b10167-bin-macos-arm64.tar.gz");
  EXPECT_EQ(llama.unpack, fetch::UnpackFormat::tar_gz);
  EXPECT_EQ(llama.strip_components, 1u) << "the archive's top folder is llama-b10167/";
  EXPECT_EQ(llama.dest, "/Users/lume/llama.cpp");
  EXPECT_EQ(
      llama.file_sha256,
      (std::map<std::string, std::string>{
          {"llama-bench", "28faa552714d0d8150b1daa4e991181d62084c88e25afe9d49d08351794f0da7"}}));
  EXPECT_FALSE(llama.sha256) << "GitHub's digest of the archive was not read here: 'lock' pins it";
  const InstallItem& model = r.value().install[1];
  EXPECT_EQ(model.source.text, model_url);
  EXPECT_EQ(model.sha256, model_sha256);
  for (const auto& entry : r.value().enablement.entries) {
    EXPECT_EQ(entry.program, "/Users/lume/llama.cpp/" + entry.name) << "no bin/ in the release";
  }
  ASSERT_TRUE(r.value().bench);
  const verify::BenchRequest& bench = r.value().bench->request;
  EXPECT_EQ(bench.model, model.dest);
  // llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o json
  EXPECT_EQ(bench.prompt, 512);
  EXPECT_EQ(bench.gen, 128);
  EXPECT_EQ(bench.repetitions, 10);
  EXPECT_EQ(bench.threads, 8);
  EXPECT_EQ(bench.gpu_layers, -1);
  // The published figures, medians of samples_ts (results.csv's guest_ratio and
  // shim_to_host_percent, to two decimals), with the command they were measured with.
  const auto& published = r.value().bench->published;
  ASSERT_TRUE(published.has_value());
  EXPECT_EQ(published->command, "llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o json");
  EXPECT_NE(published->source.find("docs/sources.md"), std::string::npos) << published->source;
  EXPECT_EQ(published->speedup, speedup);
  // "99.59%" is read as 99.59 / 100, which may differ from 0.9959 in the last bit.
  ASSERT_EQ(published->host_ratio.size(), host_ratio.size());
  for (const auto& [kind, ratio] : host_ratio) {
    EXPECT_DOUBLE_EQ(published->host_ratio.at(kind), ratio) << kind;
  }
}

TEST(Recipe, ShippedTahoeRecipeReproducesThePublishedTinyLlamaRun) {
  expect_published_run("tahoe-llm.yaml",
                       "https://huggingface.co/TheBloke/TinyLlama-1.1B-Chat-v1.0-GGUF/resolve/"
                       "52e7645ba7c309695bec7ac98f4f005b139cf465/"
                       "tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf",
                       "9fecc3b3cd76bba89d504f29b616eedf7da85b96540e490ca5824d3f7d2776a0",
                       {{"pp", 11.08}, {"tg", 16.36}},
                       {{"pp", 0.9825}, {"tg", 0.7206}});
}

TEST(Recipe, ShippedGemmaRecipeReproducesThePublishedGemmaRun) {
  expect_published_run("gemma4-12b.yaml",
                       "https://huggingface.co/google/gemma-4-12B-it-qat-q4_0-gguf/resolve/"
                       "29d097773436b69ff9feafd636ab4cf873786537/gemma-4-12b-it-qat-q4_0.gguf",
                       "93567e57a8fe10b23569b9d9ec38cd005deedf71e29477c421a4b83f418a538b",
                       {{"pp", 7.20}, {"tg", 14.54}},
                       {{"pp", 0.9959}, {"tg", 0.9482}});
}

TEST(Recipe, MissingFileIsBadUsage) {
  auto r = load_recipe("/nonexistent/recipe.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().category(), ErrorCategory::usage);
  EXPECT_EQ(r.error().message(),
            "cannot read recipe '/nonexistent/recipe.yaml': No such file or directory");
}

TEST(Recipe, TrustKeysAreReadAsWritten) {
  auto r = parse_recipe("source: {image: a.io/b/c:1}\ntrust:\n  keys: [keys/release.pub, b.pub]\n",
                        "r.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r.value().trust.keys, (std::vector<std::string>{"keys/release.pub", "b.pub"}));
  EXPECT_TRUE(r.value().trust.required());
  EXPECT_FALSE(parse_recipe("source: {image: a.io/b/c:1}\n", "r.yaml").value().trust.required());
}

TEST(Recipe, RegistryCaIsResolvedAgainstTheRecipesDirectory) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "certs");
  test::write_file(dir / "certs/ca.crt", "-----BEGIN CERTIFICATE-----\n");
  test::write_file(dir / "r.yaml", "source: {image: a.io/b/c:1}\nregistry: {ca: certs/ca.crt}\n");
  auto loaded = load_recipe(dir / "r.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  EXPECT_EQ(loaded.value().registry.ca, "certs/ca.crt");
  EXPECT_EQ(registry_ca_file(loaded.value()).value(), dir / "certs/ca.crt");

  test::write_file(dir / "r.yaml", "source: {image: a.io/b/c:1}\nregistry: {ca: nope.crt}\n");
  auto missing = registry_ca_file(load_recipe(dir / "r.yaml").value());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().category(), ErrorCategory::usage);
  EXPECT_EQ(missing.error().message(),
            "recipe '" + (dir / "r.yaml") + "' field 'registry.ca': '" + (dir / "nope.crt") +
                "' is not a file");
  EXPECT_FALSE(registry_ca_file(parse_recipe("source: {image: a.io/b/c:1}\n", "r.yaml").value())
                   .value()
                   .has_value());
}

/// A recipe whose enablement has the llama-bench and llama-perplexity entries (a flow sequence: the
/// bench: block stays on line 5), with `bench` as its bench: block.
std::string with_bench(const std::string& bench) {
  return "source: {image: a.io/b/c:1}\n"
         "enablement: [{name: llama-perplexity, program: /opt/llama.cpp/bin/llama-perplexity},\n"
         "  {name: llama-bench, program: /opt/llama.cpp/bin/llama-bench, agent: false},\n"
         "  {name: bench-gpu, program: /opt/llama.cpp/bin/llama-bench, agent: false}]\n"
         "bench:" +
         bench + "\n";
}

TEST(RecipeBench, TheBlockTakesTheSettingsOfTheBenchCommand) {
  auto r = parse_recipe(with_bench(R"(
  model: /Users/lume/models/tiny.gguf
  entry: bench-gpu
  prompt: 256
  gen: 64
  repetitions: 5
  min_speedup: 5x
  min_host_ratio: {pp: 0.95, tg: 70%}
  host_json: host/m1-ultra.json)"),
                        "r.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_TRUE(r.value().bench.has_value());
  const BenchSpec& bench = *r.value().bench;
  EXPECT_EQ(bench.entry, "bench-gpu");
  EXPECT_EQ(bench.request.model, "/Users/lume/models/tiny.gguf");
  EXPECT_EQ(bench.request.prompt, 256);
  EXPECT_EQ(bench.request.gen, 64);
  EXPECT_EQ(bench.request.repetitions, 5);
  EXPECT_EQ(bench.thresholds.min_speedup, 5.0);
  EXPECT_EQ(bench.thresholds.min_host_ratio,
            (std::map<std::string, double>{{"pp", 0.95}, {"tg", 0.70}}));
  EXPECT_EQ(bench.host_json, "host/m1-ultra.json");
  // The gate's sentences name the recipe's fields, not the flags.
  EXPECT_EQ(bench.thresholds.min_speedup_name, "bench.min_speedup");
  EXPECT_EQ(bench.thresholds.min_host_ratio_name, "bench.min_host_ratio");
}

TEST(RecipeBench, DefaultsAreThoseOfTheBenchCommand) {
  auto r = parse_recipe(with_bench(" {model: /m.gguf}"), "r.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message();
  const BenchSpec& bench = *r.value().bench;
  const verify::BenchRequest defaults;
  EXPECT_EQ(bench.entry, "llama-bench");
  EXPECT_EQ(bench.request.prompt, defaults.prompt);
  EXPECT_EQ(bench.request.gen, defaults.gen);
  EXPECT_EQ(bench.request.repetitions, defaults.repetitions);
  EXPECT_EQ(bench.request.prompt, 512);
  EXPECT_EQ(bench.request.gen, 128);
  EXPECT_EQ(bench.request.repetitions, 3);
  EXPECT_TRUE(bench.thresholds.empty());
  EXPECT_FALSE(bench.host_json);
  EXPECT_FALSE(parse_recipe(k_good, "r.yaml").value().bench.has_value());
}

TEST(RecipeBench, BadValuesNameTheFieldAndTheRule) {
  struct BenchCase {
    const char* name;
    std::string text;
    const char* message;
  };
  const BenchCase cases[] = {
      {"no model",
       with_bench(" {min_speedup: 5}"),
       "r.yaml:5:8: bench: needs 'model', the model file's path in the guest | hint: bench: "
       "{model: /Users/lume/models/tinyllama-1.1b-q4_0.gguf, min_speedup: 5}"},
      {"relative model",
       with_bench(" {model: models/m.gguf}"),
       "r.yaml:5:16: bench.model: 'models/m.gguf' is not an absolute path | hint: write where "
       "the model file is in the guest, e.g. /Users/lume/models/tinyllama-1.1b-q4_0.gguf"},
      {"negative prompt",
       with_bench(" {model: /m.gguf, prompt: -512}"),
       "r.yaml:5:33: bench.prompt: '-512' is not a whole number from 1 to 1048576"},
      {"zero repetitions",
       with_bench(" {model: /m.gguf, repetitions: 0}"),
       "r.yaml:5:38: bench.repetitions: 0 is out of range (1 to 1000)"},
      {"gen as text",
       with_bench(" {model: /m.gguf, gen: many}"),
       "r.yaml:5:30: bench.gen: 'many' is not a whole number from 1 to 1048576"},
      {"negative speedup",
       with_bench(" {model: /m.gguf, min_speedup: -5}"),
       "r.yaml:5:38: bench.min_speedup: '-5' is not a speedup of at least 1 | hint: give the "
       "factor the unlocked run must reach over the stock run, e.g. 5 or 5x"},
      {"speedup as a list",
       with_bench(" {model: /m.gguf, min_speedup: [5]}"),
       "r.yaml:5:38: bench.min_speedup: must be a number | hint: for example 5"},
      {"host ratio out of range",
       with_bench(" {model: /m.gguf, min_host_ratio: {pp: 3}, host_json: h.json}"),
       "r.yaml:5:46: bench.min_host_ratio.pp: '3' is not a share of host in [0.01, 2] | hint: "
       "give the fraction of the host's t/s the unlocked run must reach, e.g. 0.95 (or 95%)"},
      {"host ratio of an unknown kind",
       with_bench(" {model: /m.gguf, min_host_ratio: {tp: 0.9}, host_json: h.json}"),
       "r.yaml:5:42: bench.min_host_ratio.tp: unknown key | hint: did you mean 'pp'? (known "
       "keys here: pp, tg, pg)"},
      {"host ratio as a flag string",
       with_bench(" {model: /m.gguf, min_host_ratio: 'pp=0.9', host_json: h.json}"),
       "r.yaml:5:41: bench.min_host_ratio: must be a mapping of keys to values"},
      {"empty host ratio",
       with_bench(" {model: /m.gguf, min_host_ratio: {}, host_json: h.json}"),
       "r.yaml:5:41: bench.min_host_ratio: names no test kind | hint: min_host_ratio: {pp: "
       "0.95, tg: 0.70}"},
      {"host ratio without host figures",
       with_bench(" {model: /m.gguf, min_host_ratio: {pp: 0.9}}"),
       "r.yaml:5:8: bench.min_host_ratio: needs 'host_json', the host's figures to compare with "
       "| hint: add host_json: FILE (the host's 'llama-bench -o json' output, relative to the "
       "recipe)"},
      {"unknown key",
       with_bench(" {model: /m.gguf, min_speedups: 5}"),
       "r.yaml:5:25: bench.min_speedups: unknown key | hint: did you mean 'min_speedup'? (known "
       "keys here: model, entry, perplexity_entry, max_perplexity_drift, prompt, gen, "
       "repetitions, threads, gpu_layers, min_speedup, min_host_ratio, host_json, "
       "host_perplexity, published)"},
      {"entry not enabled",
       with_bench(" {model: /m.gguf, entry: llama-bnech}"),
       "r.yaml:5:32: bench.entry: 'llama-bnech' is not an entry of the recipe's enablement list "
       "| hint: did you mean 'llama-bench'?"},
      {"bench not a mapping",
       with_bench(" /m.gguf"),
       "r.yaml:5:8: bench: must be a mapping of keys to values"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(error_of(c.text), c.message) << c.name;
  }
  // The default entry must be enabled too.
  EXPECT_EQ(error_of("source: {image: a.io/b/c:1}\nbench: {model: /m.gguf}\n"),
            "r.yaml:2:8: bench.entry: 'llama-bench' is not an entry of the recipe's enablement "
            "list | hint: add an entry for llama-bench (agent: false) under 'enablement', or "
            "name the entry that runs it with bench.entry");
}

TEST(RecipeBench, ThePerplexityCheckHasItsEntryAndItsLimit) {
  auto r = parse_recipe(with_bench(" {model: /m.gguf}"), "r.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r.value().bench->perplexity_entry, "llama-perplexity");
  EXPECT_FALSE(r.value().bench->max_perplexity_drift);
  r = parse_recipe(with_bench(" {model: /m.gguf, perplexity_entry: bench-gpu, "
                              "max_perplexity_drift: 0.5%}"),
                   "r.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r.value().bench->perplexity_entry, "bench-gpu");
  EXPECT_DOUBLE_EQ(r.value().bench->max_perplexity_drift.value_or(0), 0.005);
  EXPECT_EQ(error_of(with_bench(" {model: /m.gguf, max_perplexity_drift: 3}")),
            "r.yaml:5:47: bench.max_perplexity_drift: '3' is not a relative drift in (0, 1] | "
            "hint: give how far the unlocked perplexity may move from the CPU's, e.g. 0.02 (or "
            "2%)");
  EXPECT_EQ(error_of(with_bench(" {model: /m.gguf, perplexity_entry: llama-perplexty}")),
            "r.yaml:5:43: bench.perplexity_entry: 'llama-perplexty' is not an entry of the "
            "recipe's enablement list | hint: did you mean 'llama-perplexity'?");
}

/// A bench: block that runs the published command, with `published` as its published: block.
std::string published_bench(const std::string& published) {
  return with_bench("\n  model: /m.gguf\n  repetitions: 10\n  threads: 8\n  gpu_layers: -1\n"
                    "  published:" +
                    published);
}

constexpr const char* k_published_command =
    "\n    command: llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o json";

TEST(RecipeBench, PublishedFiguresAreReadPerKindAsWritten) {
  auto r = parse_recipe(published_bench("\n    source: docs/sources.md" +
                                        std::string(k_published_command) +
                                        "\n    speedup: {pp: 7.20x, tg: 14.54}"
                                        "\n    host: {pp: 99.59%, tg: 0.9482}"),
                        "r.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message();
  const auto& published = r.value().bench->published;
  ASSERT_TRUE(published.has_value());
  EXPECT_EQ(published->source, "docs/sources.md");
  EXPECT_EQ(published->speedup, (std::map<std::string, double>{{"pp", 7.20}, {"tg", 14.54}}));
  EXPECT_DOUBLE_EQ(published->host_ratio.at("pp"), 0.9959);
  EXPECT_EQ(published->host_ratio.at("tg"), 0.9482);
  // The block may come before the fields that make the command: it is checked after them.
  auto first = parse_recipe(with_bench("\n  published: {source: s, command: 'llama-bench -p 512 "
                                       "-n 128 -r 10 -o json', speedup: {pp: 5}}\n  model: "
                                       "/m.gguf\n  repetitions: 10"),
                            "r.yaml");
  EXPECT_TRUE(first.ok()) << first.error().message();
}

TEST(RecipeBench, PublishedFiguresHoldForTheirCommandOnly) {
  struct PublishedCase {
    const char* name;
    std::string text;
    const char* message;
  };
  const PublishedCase cases[] = {
      {"another repetition count",
       with_bench("\n  model: /m.gguf\n  threads: 8\n  gpu_layers: -1\n  published: {source: s, "
                  "command: 'llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o json', speedup: "
                  "{pp: 11.08}}"),
       "r.yaml:9:14: bench.published.command: the bench runs 'llama-bench -p 512 -n 128 -r 3 -t "
       "8 -ngl -1 -o json', not the published 'llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o "
       "json' | hint: set prompt, gen, repetitions, threads and gpu_layers to the published "
       "command's, or remove 'published'"},
      {"no source",
       published_bench(std::string(k_published_command) + "\n    speedup: {pp: 11.08}"),
       "r.yaml:11:5: bench.published: needs 'source', 'command' and at least one figure "
       "('speedup' or 'host') | hint: published: {source: 'docs/sources.md, The published "
       "run', command: 'llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o json', speedup: {pp: "
       "11.08x, tg: 16.36x}}"},
      {"no figures",
       published_bench("\n    source: s" + std::string(k_published_command)),
       "r.yaml:11:5: bench.published: needs 'source', 'command' and at least one figure "
       "('speedup' or 'host') | hint: published: {source: 'docs/sources.md, The published "
       "run', command: 'llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o json', speedup: {pp: "
       "11.08x, tg: 16.36x}}"},
      {"a kind the bench does not run",
       published_bench("\n    source: s" + std::string(k_published_command) +
                       "\n    speedup: {pg: 11.08}"),
       "r.yaml:13:15: bench.published.speedup.pg: unknown key | hint: did you mean 'pp'? (known "
       "keys here: pp, tg)"},
      {"a share of host out of range",
       published_bench("\n    source: s" + std::string(k_published_command) +
                       "\n    host: {tg: 720%}"),
       "r.yaml:13:16: bench.published.host.tg: '720%' is not a share of host in [0.01, 2] | "
       "hint: give the fraction of the host's t/s the unlocked run must reach, e.g. 0.95 (or "
       "95%)"},
      {"a speedup as text",
       published_bench("\n    source: s" + std::string(k_published_command) +
                       "\n    speedup: {tg: fast}"),
       "r.yaml:13:19: bench.published.speedup.tg: 'fast' is not a speedup of at least 1 | hint: "
       "give the factor the unlocked run must reach over the stock run, e.g. 5 or 5x"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(error_of(c.text), c.message) << c.name;
  }
}

TEST(RecipeBench, HostJsonIsResolvedAgainstTheRecipesDirectory) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "host");
  test::write_file(dir / "host/m1.json", "[]");
  test::write_file(dir / "r.yaml", with_bench(" {model: /m.gguf, host_json: host/m1.json}"));
  auto loaded = load_recipe(dir / "r.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  EXPECT_EQ(bench_host_json_file(loaded.value()).value(), dir / "host/m1.json");

  test::write_file(dir / "r.yaml", with_bench(" {model: /m.gguf, host_json: none.json}"));
  auto missing = bench_host_json_file(load_recipe(dir / "r.yaml").value());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().category(), ErrorCategory::usage);
  EXPECT_EQ(missing.error().message(),
            "recipe '" + (dir / "r.yaml") + "' field 'bench.host_json': '" + (dir / "none.json") +
                "' is not a file");
  EXPECT_FALSE(bench_host_json_file(parse_recipe(k_good, "r.yaml").value()).value());

  // bench.host_perplexity, the host's llama-perplexity output, resolves the same way.
  test::write_file(dir / "host/ppl.txt", "Final estimate: PPL = 9.8 +/- 0.1\n");
  test::write_file(dir / "r.yaml", with_bench(" {model: /m.gguf, host_perplexity: host/ppl.txt}"));
  EXPECT_EQ(bench_host_perplexity_file(load_recipe(dir / "r.yaml").value()).value(),
            dir / "host/ppl.txt");
  test::write_file(dir / "r.yaml", with_bench(" {model: /m.gguf, host_perplexity: none.txt}"));
  auto absent = bench_host_perplexity_file(load_recipe(dir / "r.yaml").value());
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.error().message().find("field 'bench.host_perplexity'"), std::string::npos);
}

TEST(Recipe, DisplayVncKeepsLumesListenerAndNoSize) {
  auto r = parse_recipe("source: {image: a.io/b/c:1}\nvm: {display: vnc}\n", "r.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r.value().vm.vnc);
  EXPECT_FALSE(r.value().vm.display.has_value());
}

} // namespace
} // namespace lume_unlock::recipe

#include "recipe.hpp"
#include "recipe_sections.hpp"
#include "util/text.hpp"
#include "verify/bench.hpp"
#include "verify/perplexity.hpp"

#include <map>
#include <string>
#include <vector>

namespace lume_unlock::recipe {

namespace {

/// `min_host_ratio:`, a mapping of test kinds (pp, tg, pg) to the least unlocked/host ratio.
void read_min_host_ratio(const YamlReader& p,
                         const YAML::Node& rn,
                         const std::string& rf,
                         verify::BenchThresholds& thresholds) {
  std::vector<YamlReader::Key> kinds;
  for (const char* kind : verify::k_bench_kinds) {
    kinds.push_back({kind, [&, kind](auto& v, auto& g) {
                       thresholds.min_host_ratio[kind] =
                           p.parsed<double>(v, g, verify::parse_host_ratio, "0.95");
                     }});
  }
  p.mapping(rn, rf, kinds);
  if (thresholds.min_host_ratio.empty()) {
    p.fail(rn, rf, "names no test kind", "min_host_ratio: {pp: 0.95, tg: 0.70}");
  }
}

/// One figure per test kind of `bench.published` (speedup: {pp: 11.08x}, host: {pp: 98.25%}).
YamlReader::Handler published_figures(const YamlReader& p,
                                      std::map<std::string, double>& into,
                                      Result<double> (*parse)(std::string_view, const std::string&),
                                      const char* example) {
  return [&p, &into, parse, example](const YAML::Node& fn, const std::string& ff) {
    std::vector<YamlReader::Key> kinds;
    // A bench runs the prompt and the generation tests apart: pp and tg, never pg.
    for (const char* kind : {"pp", "tg"}) {
      kinds.push_back({kind, [&p, &into, parse, example, kind](auto& v, auto& g) {
                         into[kind] = p.parsed<double>(v, g, parse, example);
                       }});
    }
    p.mapping(fn, ff, kinds);
  };
}

/// bench.published: the run the bench reproduces, with its source and command, and its
/// figures per test kind.
verify::PublishedRun
published_run(const YamlReader& p, const YAML::Node& node, const std::string& field) {
  verify::PublishedRun run;
  p.mapping(node,
            field,
            {{"source", [&](auto& v, auto& g) { run.source = p.string(v, g); }},
             {"command", [&](auto& v, auto& g) { run.command = p.string(v, g); }},
             {"speedup", published_figures(p, run.speedup, verify::parse_min_speedup, "11.08x")},
             {"host", published_figures(p, run.host_ratio, verify::parse_host_ratio, "98.25%")}});
  if (run.source.empty() || run.command.empty() ||
      (run.speedup.empty() && run.host_ratio.empty())) {
    p.fail(node,
           field,
           "needs 'source', 'command' and at least one figure ('speedup' or 'host')",
           "published: {source: 'docs/sources.md, The published run', command: 'llama-bench -p "
           "512 -n 128 -r 10 -t 8 -ngl -1 -o json', speedup: {pp: 11.08x, tg: 16.36x}}");
  }
  return run;
}

/// Reads each key of `bench:` into `bench`.
void read_bench_keys(const YamlReader& p,
                     const YAML::Node& n,
                     const std::string& f,
                     BenchSpec& bench,
                     BenchNodes& nodes) {
  const auto tokens = [&](const YAML::Node& v, const std::string& g) {
    return static_cast<int>(p.integer(v, g, 1, verify::k_max_bench_tokens));
  };
  p.mapping(n,
            f,
            {{"model",
              [&](auto& v, auto& g) {
                bench.request.model = p.string(v, g);
                if (bench.request.model.front() != '/') {
                  p.fail(v,
                         g,
                         "'" + bench.request.model + "' is not an absolute path",
                         "write where the model file is in the guest, e.g. "
                         "/Users/lume/models/tinyllama-1.1b-q4_0.gguf");
                }
              }},
             {"entry",
              [&](auto& v, auto& g) {
                bench.entry = p.string(v, g);
                nodes.entry.emplace(v);
              }},
             {"perplexity_entry",
              [&](auto& v, auto& g) {
                bench.perplexity_entry = p.string(v, g);
                nodes.perplexity_entry.emplace(v);
              }},
             {"max_perplexity_drift",
              [&](auto& v, auto& g) {
                bench.max_perplexity_drift =
                    p.parsed<double>(v, g, verify::parse_perplexity_drift, "0.02");
              }},
             {"prompt", [&](auto& v, auto& g) { bench.request.prompt = tokens(v, g); }},
             {"gen", [&](auto& v, auto& g) { bench.request.gen = tokens(v, g); }},
             {"repetitions",
              [&](auto& v, auto& g) {
                bench.request.repetitions =
                    static_cast<int>(p.integer(v, g, 1, verify::k_max_bench_repetitions));
              }},
             {"threads",
              [&](auto& v, auto& g) {
                bench.request.threads =
                    static_cast<int>(p.integer(v, g, 1, verify::k_max_bench_threads));
              }},
             {"gpu_layers",
              [&](auto& v, auto& g) {
                bench.request.gpu_layers =
                    static_cast<int>(p.integer(v, g, -1, verify::k_max_bench_gpu_layers));
              }},
             {"min_speedup",
              [&](auto& v, auto& g) {
                bench.thresholds.min_speedup =
                    p.parsed<double>(v, g, verify::parse_min_speedup, "5");
              }},
             {"min_host_ratio",
              [&](const YAML::Node& rn, const std::string& rf) {
                read_min_host_ratio(p, rn, rf, bench.thresholds);
              }},
             {"host_json", [&](auto& v, auto& g) { bench.host_json = p.string(v, g); }},
             {"host_perplexity", [&](auto& v, auto& g) { bench.host_perplexity = p.string(v, g); }},
             {"published", [&](const YAML::Node& pn, const std::string& pf) {
                nodes.published.emplace(pn);
                bench.published = published_run(p, pn, pf);
              }}});
}

} // namespace

void parse_bench_section(const YamlReader& p,
                         const YAML::Node& n,
                         const std::string& f,
                         Recipe& recipe,
                         BenchNodes& nodes) {
  BenchSpec bench;
  bench.thresholds.min_speedup_name = "bench.min_speedup";
  bench.thresholds.min_host_ratio_name = "bench.min_host_ratio";
  read_bench_keys(p, n, f, bench, nodes);
  if (bench.request.model.empty()) {
    p.fail(n,
           f,
           "needs 'model', the model file's path in the guest",
           "bench: {model: /Users/lume/models/tinyllama-1.1b-q4_0.gguf, "
           "min_speedup: 5}");
  }
  if (!bench.thresholds.min_host_ratio.empty() && !bench.host_json) {
    // create and bake take no --host-json: without the file the gate could
    // only fail.
    p.fail(n,
           f + ".min_host_ratio",
           "needs 'host_json', the host's figures to compare with",
           "add host_json: FILE (the host's 'llama-bench -o json' output, relative "
           "to the recipe)");
  }
  if (bench.published) {
    // Its figures hold for its command only (verify/published_run).
    if (auto why = verify::published_command_mismatch(bench.request, bench.published->command)) {
      p.fail(*nodes.published,
             f + ".published.command",
             *why,
             "set prompt, gen, repetitions, threads and gpu_layers to the published command's, or "
             "remove 'published'");
    }
  }
  nodes.bench.emplace(n);
  recipe.bench = bench;
}

void check_bench_entry(const YamlReader& p, const Recipe& recipe, const BenchNodes& nodes) {
  if (!recipe.bench) {
    return;
  }
  const auto check = [&](const std::string& name,
                         const std::optional<YAML::Node>& node,
                         const char* field,
                         const char* program) {
    if (recipe.enablement.find(name) != nullptr) {
      return;
    }
    const auto match = util::closest_match(name, recipe.enablement.names());
    p.fail(node ? *node : *nodes.bench,
           field,
           "'" + name + "' is not an entry of the recipe's enablement list",
           match ? "did you mean '" + *match + "'?"
                 : "add an entry for " + std::string(program) +
                       " (agent: false) under 'enablement', or name the entry that runs it with " +
                       field);
  };
  check(recipe.bench->entry, nodes.entry, "bench.entry", "llama-bench");
  check(recipe.bench->perplexity_entry,
        nodes.perplexity_entry,
        "bench.perplexity_entry",
        "llama-perplexity");
}

} // namespace lume_unlock::recipe

#include "recipe_sections.hpp"

#include "recipe/recipe.hpp"
#include "util/text.hpp"
#include "verify/bench.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::recipe {

namespace {

/// WIDTHxHEIGHT, each 2 to 5 digits without a leading zero ("1920x1080").
bool is_display_size(std::string_view text) {
  const auto dimension = [](std::string_view d) {
    return d.size() >= 2 && d.size() <= 5 && d[0] != '0' && all_of_in(d, k_digits);
  };
  const std::size_t x = text.find('x');
  return x != std::string_view::npos && dimension(text.substr(0, x)) &&
         dimension(text.substr(x + 1));
}

/// A macOS short account name as Lume's unattended setup makes them: a lower-case letter or
/// '_', then up to 31 of [a-z0-9_.-].
bool is_account_name(std::string_view text) {
  return !text.empty() && text.size() <= 32 &&
         all_of_in(text.substr(0, 1), "abcdefghijklmnopqrstuvwxyz_") &&
         all_of_in(text.substr(1), "abcdefghijklmnopqrstuvwxyz0123456789_.-");
}

/// One to three dot-separated numbers ("26", "15.7.2"), as `sw_vers -productVersion` prints.
bool is_macos_version(std::string_view text) {
  int parts = 0;
  for (std::size_t start = 0; start <= text.size(); ++parts) {
    const std::size_t dot = std::min(text.find('.', start), text.size());
    const std::string_view part = text.substr(start, dot - start);
    if (part.empty() || part.size() > 5 || !all_of_in(part, k_digits)) {
      return false;
    }
    start = dot + 1;
  }
  return parts <= 3;
}

/// vm.memory and vm.disk: a size with its unit, at most `ceiling`.
std::uint64_t
vm_size(const YamlReader& p, const YAML::Node& v, const std::string& g, std::uint64_t ceiling) {
  auto bytes = parse_vm_size(p.string(v, g), ceiling);
  if (!bytes) {
    p.fail(v, g, bytes.error().why(), bytes.error().hint());
  }
  return bytes.value();
}

ExternalShimSpec& external(Recipe& recipe) {
  if (!recipe.shim.external) {
    recipe.shim.external.emplace();
  }
  return *recipe.shim.external;
}

/// shim.dylib: a path whose file name becomes the guest file's name (and part of the injection
/// variable, which LD_PRELOAD splits at spaces and colons).
std::string dylib_path(const YamlReader& p, const YAML::Node& v, const std::string& g) {
  std::string path = p.string(v, g);
  const std::string name = util::base_name(path);
  if (name.empty() || name == "." || name == ".." ||
      !all_of_in(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-")) {
    p.fail(v,
           g,
           "the file name '" + name + "' must be letters, digits, '.', '_', '+' or '-'",
           "it becomes the file's name in the guest; rename the file, e.g. "
           "LumeMetalCapabilities-arm64.dylib");
  }
  return path;
}

/// shim.sha256: 64 hex digits, kept in lower case (what shasum prints).
std::string digest(const YamlReader& p, const YAML::Node& v, const std::string& g) {
  std::string hex = p.string(v, g);
  for (char& c : hex) {
    c = (c >= 'A' && c <= 'F') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  if (hex.size() != 64 || !all_of_in(hex, "0123456789abcdef")) {
    p.fail(v,
           g,
           "'" + p.string(v, g) + "' is not a SHA-256 (64 hex digits)",
           "write the dylib's digest as 'shasum -a 256 FILE' prints it, without 'sha256:'");
  }
  return hex;
}

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

void parse_source_section(const YamlReader& p,
                          const YAML::Node& n,
                          const std::string& f,
                          Recipe& recipe) {
  p.mapping(n,
            f,
            {{"image", [&](auto& v, auto& g) { recipe.source.image = p.string(v, g); }},
             {"ipsw", [&](auto& v, auto& g) { recipe.source.ipsw = p.string(v, g); }},
             {"unattended", [&](auto& v, auto& g) { recipe.source.unattended = p.string(v, g); }},
             {"macos", [&](auto& v, auto& g) {
                recipe.source.macos = p.string(v, g);
                if (!is_macos_version(*recipe.source.macos)) {
                  p.fail(v, g, "'" + *recipe.source.macos + "' is not a macOS version (26.5.2)");
                }
              }}});
  const bool image = recipe.source.image.has_value();
  const bool ipsw = recipe.source.ipsw.has_value();
  if (image == ipsw) {
    p.fail(n, f, "needs exactly one of 'image' or 'ipsw'");
  }
  if (recipe.source.unattended && !ipsw) {
    p.fail(n, f + ".unattended", "only applies to 'ipsw' sources");
  }
}

void parse_vm_section(const YamlReader& p,
                      const YAML::Node& n,
                      const std::string& f,
                      Recipe& recipe) {
  p.mapping(
      n,
      f,
      {{"cpu", [&](auto& v, auto& g) { recipe.vm.cpu = static_cast<int>(p.integer(v, g, 1, 64)); }},
       {"memory",
        [&](auto& v, auto& g) { recipe.vm.memory_bytes = vm_size(p, v, g, k_max_memory_bytes); }},
       {"disk",
        [&](auto& v, auto& g) { recipe.vm.disk_bytes = vm_size(p, v, g, k_max_disk_bytes); }},
       {"display", [&](auto& v, auto& g) {
          std::string d = p.string(v, g);
          if (d == "vnc") {
            recipe.vm.vnc = true;
            return;
          }
          if (!is_display_size(d)) {
            p.fail(v,
                   g,
                   "'" + d + "' is neither WIDTHxHEIGHT nor 'vnc'",
                   "for example 1920x1080, or vnc to keep Lume's VNC listener");
          }
          recipe.vm.display = d;
        }}});
  if (recipe.vm.memory_bytes < (1ULL << 30)) {
    p.fail(n, f + ".memory", "must be at least 1GB for a macOS guest");
  }
}

void parse_guest_section(const YamlReader& p,
                         const YAML::Node& n,
                         const std::string& f,
                         Recipe& recipe) {
  p.mapping(n, f, {{"user", [&](auto& v, auto& g) {
                      std::string user = p.string(v, g);
                      if (!is_account_name(user)) {
                        p.fail(v, g, "'" + user + "' is not a valid account name");
                      }
                      recipe.guest.user = user;
                    }}});
}

void parse_shim_section(const YamlReader& p,
                        const YAML::Node& n,
                        const std::string& f,
                        Recipe& recipe) {
  p.mapping(n,
            f,
            {{"profile",
              [&](auto& v, auto& g) { enablement::read_profile(p, v, g, recipe.shim.profile); }},
             {"bundle", [&](auto& v, auto& g) { recipe.shim.bundle = p.string(v, g); }},
             {"dylib", [&](auto& v, auto& g) { external(recipe).dylib = dylib_path(p, v, g); }},
             {"sha256", [&](auto& v, auto& g) { external(recipe).sha256 = digest(p, v, g); }}});
  if (recipe.shim.external &&
      (recipe.shim.external->dylib.empty() || recipe.shim.external->sha256.empty())) {
    p.fail(n,
           f,
           recipe.shim.external->dylib.empty() ? "has 'sha256' without 'dylib'"
                                               : "has 'dylib' without 'sha256'",
           "name an externally built shim with both: shim: {dylib: PATH, sha256: <64 hex>}");
  }
}

void parse_trust_section(const YamlReader& p,
                         const YAML::Node& n,
                         const std::string& f,
                         Recipe& recipe) {
  p.mapping(n, f, {{"keys", [&](const YAML::Node& kn, const std::string& kf) {
                      if (!kn.IsSequence() || kn.size() == 0) {
                        p.fail(kn,
                               kf,
                               "must be a non-empty list of public keys",
                               "each entry: a .pub path relative to the recipe, or "
                               "an inline -----BEGIN PUBLIC KEY----- block");
                      }
                      for (std::size_t i = 0; i < kn.size(); ++i) {
                        recipe.trust.keys.push_back(
                            p.string(kn[i], kf + "[" + std::to_string(i) + "]"));
                        recipe.trust.key_sources.push_back(p.where(kn[i]));
                      }
                    }}});
  if (!recipe.trust.required()) {
    p.fail(n, f, "needs 'keys'", "trust: {keys: [signing.pub]}");
  }
}

void parse_registry_section(const YamlReader& p,
                            const YAML::Node& n,
                            const std::string& f,
                            Recipe& recipe) {
  p.mapping(n, f, {{"ca", [&](auto& v, auto& g) { recipe.registry.ca = p.string(v, g); }}});
}

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

#include "recipe.hpp"

#include "enablement/enablement_yaml.hpp"
#include "util/atomic_file.hpp"
#include "util/edit_distance.hpp"
#include "util/sha256.hpp"
#include "util/size.hpp"
#include "util/text_check.hpp"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <functional>
#include <string_view>
#include <vector>

namespace lume_unlock::recipe {

namespace {

// Plain scans instead of std::regex: no input length can make them recurse (issue 15).

bool all_of_in(std::string_view text, std::string_view allowed) {
  return text.find_first_not_of(allowed) == std::string_view::npos;
}

constexpr std::string_view k_digits = "0123456789";

/// "0", up to 18 decimal digits without a leading zero, or "0x" and up to 15 hex digits: what
/// fits a long long with room for the range check.
bool is_whole_number(std::string_view text) {
  if (text.rfind("0x", 0) == 0) {
    const std::string_view hex = text.substr(2);
    return !hex.empty() && hex.size() <= 15 && all_of_in(hex, "0123456789abcdefABCDEF");
  }
  return text == "0" ||
         (!text.empty() && text.size() <= 18 && text[0] != '0' && all_of_in(text, k_digits));
}

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

/// Thrown inside the parser and turned into a Result at its edge.
struct RecipeError {
  Error error;
};

class Parser {
public:
  explicit Parser(std::string source_name) : m_source(std::move(source_name)) {}

  [[noreturn]] void fail(const YAML::Node& node,
                         const std::string& field,
                         const std::string& why,
                         const std::string& hint = {}) const {
    throw RecipeError{Error(ErrorCategory::usage, where(node) + ": " + field, why, hint)};
  }

  /// "recipe.yaml:12:7", the source and the node's line and column (just the source when the
  /// node has no mark).
  std::string where(const YAML::Node& node) const {
    const YAML::Mark mark = node.Mark();
    std::string where = m_source;
    if (mark.line >= 0) {
      where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
    }
    return where;
  }

  using Handler = std::function<void(const YAML::Node& value, const std::string& field)>;
  struct Key {
    const char* name;
    Handler handle;
  };

  /// Walks a mapping with a key table: every key must be known, each handled once.
  void
  mapping(const YAML::Node& node, const std::string& field, const std::vector<Key>& keys) const {
    if (!node.IsMap()) {
      fail(node, field, "must be a mapping of keys to values");
    }
    std::vector<std::string> names;
    for (const auto& key : keys) {
      names.emplace_back(key.name);
    }
    for (const auto& item : node) {
      const std::string name = item.first.as<std::string>();
      const std::string child = field.empty() ? name : field + "." + name;
      const Key* found = nullptr;
      for (const auto& key : keys) {
        if (name == key.name) {
          found = &key;
        }
      }
      if (found == nullptr) {
        std::string hint = "known keys here: ";
        for (std::size_t i = 0; i < names.size(); ++i) {
          hint += (i ? ", " : "") + names[i];
        }
        if (auto match = util::closest_match(name, names)) {
          hint = "did you mean '" + *match + "'? (" + hint + ")";
        }
        fail(item.first, child, "unknown key", hint);
      }
      found->handle(item.second, child);
    }
  }

  std::string string(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar() || node.Tag() == "tag:yaml.org,2002:null" || node.Scalar().empty()) {
      fail(node, field, "must be a non-empty string");
    }
    return node.Scalar();
  }

  long long
  integer(const YAML::Node& node, const std::string& field, long long min, long long max) const {
    if (!node.IsScalar() || node.Tag() == "!") {
      fail(node,
           field,
           "must be a whole number from " + std::to_string(min) + " to " + std::to_string(max));
    }
    const std::string text = node.Scalar();
    const bool negative = min < 0 && text.size() > 1 && text[0] == '-' && text[1] != '0';
    if (!is_whole_number(negative ? text.substr(1) : text)) {
      fail(node,
           field,
           "'" + text + "' is not a whole number from " + std::to_string(min) + " to " +
               std::to_string(max));
    }
    const long long value = std::stoll(text, nullptr, 0);
    if (value < min || value > max) {
      fail(node,
           field,
           std::to_string(value) + " is out of range (" + std::to_string(min) + " to " +
               std::to_string(max) + ")");
    }
    return value;
  }

  /// A value parsed from its scalar text by `parse` (a verify:: parser shared with the CLI
  /// flags), its error reported at the node.
  template <class T>
  T parsed(const YAML::Node& node,
           const std::string& field,
           const std::function<Result<T>(std::string_view, const std::string&)>& parse,
           const std::string& example) const {
    if (!node.IsScalar() || node.Tag() == "tag:yaml.org,2002:null" || node.Scalar().empty()) {
      fail(node, field, "must be a number", "for example " + example);
    }
    auto value = parse(node.Scalar(), field);
    if (!value) {
      fail(node, field, value.error().why(), value.error().hint());
    }
    return value.value();
  }

  std::uint64_t
  size(const YAML::Node& node, const std::string& field, std::uint64_t ceiling) const {
    auto bytes = parse_vm_size(string(node, field), ceiling);
    if (!bytes) {
      fail(node, field, bytes.error().why(), bytes.error().hint());
    }
    return bytes.value();
  }

private:
  std::string m_source;
};

/// A `mode:` of an installed file: octal, as chmod takes it ("0755", "644"), no set-id or sticky
/// bit (a recipe never needs one, and a setuid file is a privilege handed to any guest process).
mode_t file_mode(const Parser& p, const YAML::Node& node, const std::string& field) {
  const std::string text = p.string(node, field);
  if (text.size() > 4 || !all_of_in(text, "01234567")) {
    p.fail(node, field, "'" + text + "' is not an octal file mode", "for example 0755 or 0644");
  }
  const auto mode = static_cast<mode_t>(std::stoul(text, nullptr, 8));
  if (mode > 0777) {
    p.fail(node,
           field,
           "'" + text + "' sets a set-id or sticky bit",
           "installed files get permission bits only, for example 0755");
  }
  if ((mode & 0400) == 0) {
    p.fail(
        node, field, "'" + text + "' leaves the file unreadable to its owner", "for example 0644");
  }
  return mode;
}

/// A `sha256:` value: 64 lower-case hex digits, with or without the "sha256:" prefix.
std::string sha256_value(const Parser& p, const YAML::Node& node, const std::string& field) {
  const std::string text = p.string(node, field);
  const std::string digest = text.rfind("sha256:", 0) == 0 ? text.substr(7) : text;
  if (!util::is_sha256_hex(digest)) {
    p.fail(node,
           field,
           "'" + text + "' is not a SHA-256 (64 lower-case hex digits)",
           "leave it out and run 'lume-unlock lock RECIPE' to pin what the source serves, or "
           "copy the digest the publisher gives");
  }
  return digest;
}

/// `files:`, a mapping of paths inside the unpacked tree (below dest, after strip_components)
/// to the SHA-256 each must have.
std::map<std::string, std::string>
file_digests(const Parser& p, const YAML::Node& node, const std::string& field) {
  if (!node.IsMap() || node.size() == 0) {
    p.fail(node,
           field,
           "must map paths inside the archive to their SHA-256",
           "for example files: {llama-bench: <64 hex digits>}");
  }
  std::map<std::string, std::string> digests;
  for (const auto& entry : node) {
    const std::string path = p.string(entry.first, field);
    const std::string where = field + "." + path;
    if (dest_problem("/" + path) || path.empty()) {
      p.fail(entry.first,
             where,
             "'" + path + "' is not a relative path inside the tree",
             "write the path below dest, e.g. llama-bench");
    }
    digests[path] = sha256_value(p, entry.second, where);
  }
  return digests;
}

/// `share:`, true or false (YAML 1.2's words: "yes" and "on" are not booleans there).
bool share_flag(const Parser& p, const YAML::Node& node, const std::string& field) {
  if (node.IsScalar() && node.Tag() != "!" &&
      (node.Scalar() == "true" || node.Scalar() == "false")) {
    return node.Scalar() == "true";
  }
  p.fail(node, field, "must be true or false", "share: true keeps a model in the host's cache");
}

/// What `share: true` cannot be combined with: the guest sees the cached blob itself, one
/// read-only file, so nothing can be unpacked, given a mode, or come from anywhere but the cache.
void check_shared_item(const Parser& p,
                       const YAML::Node& share,
                       const InstallItem& item,
                       bool has_file,
                       bool has_mode) {
  const std::string field = item.field + ".share";
  if (item.unpack != fetch::UnpackFormat::none) {
    p.fail(share,
           field,
           "cannot share an archive (unpack: " + std::string(fetch::format_name(item.unpack)) +
               "): the guest sees the cached blob itself, read-only, and nothing unpacks it",
           "remove share (the tree is sent over SSH), or share the single files it holds as "
           "items of their own");
  }
  if (has_file) {
    p.fail(share,
           field,
           "cannot share a 'file:' source: it is hashed in place and never enters the cache, "
           "and only the cache is shared with the VM",
           "remove share, or publish the file and name it with url: (https:// or oci://)");
  }
  if (has_mode) {
    p.fail(share,
           field,
           "cannot be combined with mode: the guest reaches the cached blob through a "
           "read-only share, where its mode cannot be set",
           "remove mode (a shared model needs none), or remove share");
  }
}

InstallItem parse_install_item(const Parser& p, const YAML::Node& node, const std::string& field) {
  InstallItem item;
  item.field = field;
  std::optional<YAML::Node> mode_node;
  std::optional<YAML::Node> strip_node;
  std::optional<YAML::Node> files_node;
  std::optional<YAML::Node> share_node;
  bool has_url = false;
  bool has_file = false;
  const auto source_from =
      [&](const YAML::Node& v, const std::string& g, const Result<fetch::ArtifactSource>& parsed) {
        if (!parsed) {
          p.fail(v, g, parsed.error().why(), parsed.error().hint());
        }
        item.source = parsed.value();
      };
  p.mapping(node,
            field,
            {{"url",
              [&](auto& v, auto& g) {
                has_url = true;
                source_from(v, g, fetch::parse_url_source(p.string(v, g)));
              }},
             {"file",
              [&](auto& v, auto& g) {
                has_file = true;
                const std::string path = p.string(v, g);
                if (auto problem = util::text_problem(path)) {
                  p.fail(v, g, "the path " + *problem);
                }
                item.source = fetch::file_source(path);
              }},
             {"sha256", [&](auto& v, auto& g) { item.sha256 = sha256_value(p, v, g); }},
             {"files",
              [&](auto& v, auto& g) {
                files_node.emplace(v);
                item.file_sha256 = file_digests(p, v, g);
              }},
             {"dest",
              [&](auto& v, auto& g) {
                item.dest = p.string(v, g);
                if (auto problem = dest_problem(item.dest)) {
                  p.fail(v,
                         g,
                         "'" + item.dest + "' " + *problem,
                         "write the absolute guest path, e.g. /Users/lume/llama.cpp");
                }
              }},
             {"unpack",
              [&](auto& v, auto& g) {
                auto format = fetch::parse_unpack_format(p.string(v, g));
                if (!format) {
                  p.fail(v, g, format.error().why(), format.error().hint());
                }
                item.unpack = format.value();
              }},
             {"strip_components",
              [&](auto& v, auto& g) {
                item.strip_components = static_cast<unsigned>(p.integer(v, g, 0, 32));
                strip_node.emplace(v);
              }},
             {"mode",
              [&](auto& v, auto& g) {
                item.mode = file_mode(p, v, g);
                mode_node.emplace(v);
              }},
             {"share", [&](auto& v, auto& g) {
                item.share = share_flag(p, v, g);
                share_node.emplace(v);
              }}});
  if (has_url == has_file) {
    p.fail(node,
           field,
           has_url ? "names both 'url' and 'file'" : "needs 'url' or 'file'",
           "url: https://… (or oci://REPO@sha256:…), or file: PATH relative to the recipe");
  }
  if (item.dest.empty()) {
    p.fail(node, field, "needs 'dest', the absolute guest path", "dest: /Users/lume/llama.cpp");
  }
  const bool archive = item.unpack != fetch::UnpackFormat::none;
  if (strip_node && !archive) {
    p.fail(*strip_node,
           field + ".strip_components",
           "only applies to archives",
           "add unpack: zip or unpack: tar.gz, or remove strip_components");
  }
  if (files_node && !archive) {
    p.fail(*files_node,
           field + ".files",
           "only applies to archives",
           "a single file is pinned by the item's own sha256");
  }
  if (mode_node && archive) {
    p.fail(*mode_node,
           field + ".mode",
           "only applies to single files (unpack: none)",
           "an archive's files keep their own modes (0755 for executables, else 0644)");
  }
  if (item.share) {
    check_shared_item(p, *share_node, item, has_file, mode_node.has_value());
  }
  return item;
}

/// No two items may write the same path, or one into the other's tree.
void check_install_dests(const Parser& p,
                         const YAML::Node& list,
                         const std::vector<InstallItem>& items) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const std::string& a = items[j].dest;
      const std::string& b = items[i].dest;
      const auto inside = [](const std::string& path, const std::string& root) {
        return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
               path[root.size()] == '/';
      };
      if (a == b || inside(a, b) || inside(b, a)) {
        p.fail(list[i]["dest"],
               items[i].field + ".dest",
               "'" + b + "' overlaps " + items[j].field + ".dest '" + a + "'",
               "give each item its own destination");
      }
    }
  }
}

} // namespace

Result<std::uint64_t> parse_vm_size(std::string_view text, std::uint64_t ceiling) {
  const std::string quoted = "'" + std::string(text) + "'";
  auto fail = [&](const std::string& why,
                  const std::string& hint =
                      "write it like 16GB or 8192MB (units: TB, GB, MB, KB, B)") -> Error {
    return Error(ErrorCategory::usage, "invalid size " + quoted, why, hint);
  };
  if (text.find_first_not_of("0123456789. ") == std::string_view::npos) {
    return fail(quoted + " has no unit");
  }
  auto bytes = util::parse_size(text);
  if (!bytes) {
    return fail(quoted + ": " + bytes.error().why());
  }
  if (bytes.value() == 0) {
    return fail(quoted + " is zero");
  }
  if (bytes.value() > ceiling) {
    return fail(quoted + " (" + std::to_string(bytes.value()) +
                    " bytes) is more than the ceiling of " + util::format_size(ceiling),
                "no Mac can back it; at most " + util::format_size(ceiling));
  }
  return bytes.value();
}

Result<Recipe> parse_recipe(std::string_view text, const std::string& source_name) {
  Parser p(source_name);
  Recipe recipe;
  // Where the bench errors found after the walk point (optional: assigning to a YAML::Node
  // rebinds only an empty one, so each is emplaced once).
  std::optional<YAML::Node> bench_node;
  std::optional<YAML::Node> bench_entry;
  recipe.sha256 = util::sha256_hex(text);
  try {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::ParserException& e) {
      return Error(ErrorCategory::usage,
                   source_name + ":" + std::to_string(e.mark.line + 1) + ":" +
                       std::to_string(e.mark.column + 1),
                   "invalid YAML: " + e.msg);
    }
    if (!root || root.IsNull()) {
      return Error(ErrorCategory::usage,
                   source_name,
                   "the recipe is empty",
                   "see image-recipes/README.md for the fields");
    }
    p.mapping(
        root,
        "",
        {
            {"source",
             [&](const YAML::Node& n, const std::string& f) {
               p.mapping(
                   n,
                   f,
                   {{"image", [&](auto& v, auto& g) { recipe.source.image = p.string(v, g); }},
                    {"ipsw", [&](auto& v, auto& g) { recipe.source.ipsw = p.string(v, g); }},
                    {"unattended",
                     [&](auto& v, auto& g) { recipe.source.unattended = p.string(v, g); }}});
               const bool image = recipe.source.image.has_value();
               const bool ipsw = recipe.source.ipsw.has_value();
               if (image == ipsw) {
                 p.fail(n, f, "needs exactly one of 'image' or 'ipsw'");
               }
               if (recipe.source.unattended && !ipsw) {
                 p.fail(n, f + ".unattended", "only applies to 'ipsw' sources");
               }
             }},
            {"vm",
             [&](const YAML::Node& n, const std::string& f) {
               p.mapping(
                   n,
                   f,
                   {{"cpu",
                     [&](auto& v, auto& g) {
                       recipe.vm.cpu = static_cast<int>(p.integer(v, g, 1, 64));
                     }},
                    {"memory",
                     [&](auto& v, auto& g) {
                       recipe.vm.memory_bytes = p.size(v, g, k_max_memory_bytes);
                     }},
                    {"disk",
                     [&](auto& v, auto& g) {
                       recipe.vm.disk_bytes = p.size(v, g, k_max_disk_bytes);
                     }},
                    {"display", [&](auto& v, auto& g) {
                       std::string d = p.string(v, g);
                       if (!is_display_size(d)) {
                         p.fail(v, g, "'" + d + "' is not WIDTHxHEIGHT", "for example 1920x1080");
                       }
                       recipe.vm.display = d;
                     }}});
               if (recipe.vm.memory_bytes < (1ULL << 30)) {
                 p.fail(n, f + ".memory", "must be at least 1GB for a macOS guest");
               }
             }},
            {"guest",
             [&](const YAML::Node& n, const std::string& f) {
               p.mapping(n, f, {{"user", [&](auto& v, auto& g) {
                                   std::string user = p.string(v, g);
                                   if (!is_account_name(user)) {
                                     p.fail(v, g, "'" + user + "' is not a valid account name");
                                   }
                                   recipe.guest.user = user;
                                 }}});
             }},
            {"shim",
             [&](const YAML::Node& n, const std::string& f) {
               p.mapping(
                   n,
                   f,
                   {{"profile",
                     [&](const YAML::Node& pn, const std::string& pf) {
                       p.mapping(pn,
                                 pf,
                                 {{"apple_family_max",
                                   [&](auto& v, auto& g) {
                                     recipe.shim.profile.apple_family_max =
                                         static_cast<std::uint64_t>(p.integer(v, g, 1001, 1999));
                                   }},
                                  {"max_threadgroup_memory", [&](auto& v, auto& g) {
                                     recipe.shim.profile.max_threadgroup_memory =
                                         static_cast<std::uint64_t>(p.integer(v, g, 1, 1LL << 30));
                                   }}});
                     }},
                    {"bundle", [&](auto& v, auto& g) { recipe.shim.bundle = p.string(v, g); }}});
             }},
            {"trust",
             [&](const YAML::Node& n, const std::string& f) {
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
             }},
            {"registry",
             [&](const YAML::Node& n, const std::string& f) {
               p.mapping(
                   n, f, {{"ca", [&](auto& v, auto& g) { recipe.registry.ca = p.string(v, g); }}});
             }},
            {"bench",
             [&](const YAML::Node& n, const std::string& f) {
               BenchSpec bench;
               bench.thresholds.min_speedup_name = "bench.min_speedup";
               bench.thresholds.min_host_ratio_name = "bench.min_host_ratio";
               const auto tokens = [&](const YAML::Node& v, const std::string& g) {
                 return static_cast<int>(p.integer(v, g, 1, verify::k_max_bench_tokens));
               };
               p.mapping(
                   n,
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
                       bench_entry.emplace(v);
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
                       std::vector<Parser::Key> kinds;
                       for (const char* kind : verify::k_bench_kinds) {
                         kinds.push_back({kind, [&, kind](auto& v, auto& g) {
                                            bench.thresholds.min_host_ratio[kind] =
                                                p.parsed<double>(
                                                    v, g, verify::parse_host_ratio, "0.95");
                                          }});
                       }
                       p.mapping(rn, rf, kinds);
                       if (bench.thresholds.min_host_ratio.empty()) {
                         p.fail(
                             rn, rf, "names no test kind", "min_host_ratio: {pp: 0.95, tg: 0.70}");
                       }
                     }},
                    {"host_json", [&](auto& v, auto& g) { bench.host_json = p.string(v, g); }}});
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
               bench_node.emplace(n);
               recipe.bench = bench;
             }},
            {"install",
             [&](const YAML::Node& n, const std::string& f) {
               if (!n.IsSequence() || n.size() == 0) {
                 p.fail(n,
                        f,
                        "must be a non-empty list of artifacts",
                        "install: [{url: https://…/llama-bXXXX-bin-macos-arm64.tar.gz, unpack: "
                        "tar.gz, strip_components: 1, dest: /Users/lume/llama.cpp}]");
               }
               for (std::size_t i = 0; i < n.size(); ++i) {
                 recipe.install.push_back(
                     parse_install_item(p, n[i], f + "[" + std::to_string(i) + "]"));
               }
               check_install_dests(p, n, recipe.install);
             }},
            {"enablement",
             [&](const YAML::Node& n, const std::string& f) {
               if (!n.IsSequence()) {
                 p.fail(n, f, "must be a list of entries");
               }
               auto list = enablement::enablement_from_yaml(n, source_name);
               if (!list) {
                 throw RecipeError{list.error()};
               }
               recipe.enablement = std::move(list.value());
             }},
        });
    // Checked once the whole recipe is read: `bench` may come before `enablement`.
    if (recipe.bench && recipe.enablement.find(recipe.bench->entry) == nullptr) {
      const auto names = recipe.enablement.names();
      const auto match = util::closest_match(recipe.bench->entry, names);
      p.fail(bench_entry ? *bench_entry : *bench_node,
             "bench.entry",
             "'" + recipe.bench->entry + "' is not an entry of the recipe's enablement list",
             match ? "did you mean '" + *match + "'?"
                   : "add an entry for llama-bench (agent: false) under 'enablement', or name "
                     "the entry that runs it with bench.entry");
    }
    if (!recipe.source.image && !recipe.source.ipsw) {
      return Error(ErrorCategory::usage,
                   source_name + ": source",
                   "is required",
                   "add 'source: {image: ghcr.io/trycua/macos-tahoe-cua:latest}'");
    }
  } catch (const RecipeError& e) {
    return e.error;
  } catch (const YAML::Exception& e) {
    return Error(ErrorCategory::usage, source_name, std::string("invalid recipe: ") + e.what());
  }
  return recipe;
}

Result<Recipe> load_recipe(const std::string& path) {
  auto text = util::read_input_file(path, k_max_recipe_bytes, "the recipe");
  if (!text) {
    return Error(ErrorCategory::usage,
                 "cannot read recipe '" + path + "'",
                 text.error().why(),
                 "pass an existing file, e.g. --recipe image-recipes/tahoe-llm.yaml");
  }
  auto recipe = parse_recipe(text.value(), path);
  if (recipe) {
    recipe.value().path = path;
  }
  return recipe;
}

namespace {

/// A path written in the recipe, as seen from the working directory: relative paths are
/// relative to the recipe's directory, so a recipe works from wherever it is run.
std::string relative_to_recipe(const Recipe& recipe, const std::string& written_text) {
  const std::filesystem::path written(written_text);
  return written.is_absolute() ? written.string()
                               : (std::filesystem::path(recipe.path).parent_path() / written)
                                     .lexically_normal()
                                     .string();
}

} // namespace

Result<std::optional<std::string>> bench_host_json_file(const Recipe& recipe) {
  if (!recipe.bench || !recipe.bench->host_json) {
    return std::optional<std::string>();
  }
  const std::string path = relative_to_recipe(recipe, *recipe.bench->host_json);
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(path, ignored)) {
    return Error(ErrorCategory::usage,
                 "recipe '" + recipe.path + "' field 'bench.host_json'",
                 "'" + path + "' is not a file",
                 "write the path of the host's 'llama-bench -o json' output relative to the "
                 "recipe's directory");
  }
  return std::optional<std::string>(path);
}

Result<std::optional<std::string>> registry_ca_file(const Recipe& recipe) {
  if (!recipe.registry.ca) {
    return std::optional<std::string>();
  }
  const std::string path = relative_to_recipe(recipe, *recipe.registry.ca);
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(path, ignored)) {
    return Error(ErrorCategory::usage,
                 "recipe '" + recipe.path + "' field 'registry.ca'",
                 "'" + path + "' is not a file",
                 "write the path of the registry's CA certificate (PEM) relative to the recipe's "
                 "directory, or give it with --registry-ca FILE");
  }
  return std::optional<std::string>(path);
}

} // namespace lume_unlock::recipe

#include "recipe/recipe.hpp"
#include "recipe_sections.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <map>
#include <optional>
#include <string>

namespace lume_unlock::recipe {

namespace {

/// A `mode:` of an installed file: octal, as chmod takes it ("0755", "644"), no set-id or sticky
/// bit (a recipe never needs one, and a setuid file is a privilege handed to any guest process).
mode_t file_mode(const YamlReader& p, const YAML::Node& node, const std::string& field) {
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
std::string sha256_value(const YamlReader& p, const YAML::Node& node, const std::string& field) {
  const std::string text = p.string(node, field);
  const std::string digest = util::starts_with(text, "sha256:") ? text.substr(7) : text;
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
file_digests(const YamlReader& p, const YAML::Node& node, const std::string& field) {
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

/// Where an item's keys were written, kept for the checks across keys after the walk.
struct ItemKeysSeen {
  bool url = false;
  bool file = false;
  std::optional<YAML::Node> mode;
  std::optional<YAML::Node> strip;
  std::optional<YAML::Node> files;
  std::optional<YAML::Node> share;
};

/// Reads each key of one `install:` item into `item`, noting in `seen` which were written.
void read_install_keys(const YamlReader& p,
                       const YAML::Node& node,
                       const std::string& field,
                       InstallItem& item,
                       ItemKeysSeen& seen) {
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
                seen.url = true;
                source_from(v, g, fetch::parse_url_source(p.string(v, g)));
              }},
             {"file",
              [&](auto& v, auto& g) {
                seen.file = true;
                const std::string path = p.string(v, g);
                if (auto problem = util::text_problem(path)) {
                  p.fail(v, g, "the path " + *problem);
                }
                item.source = fetch::file_source(path);
              }},
             {"sha256", [&](auto& v, auto& g) { item.sha256 = sha256_value(p, v, g); }},
             {"files",
              [&](auto& v, auto& g) {
                seen.files.emplace(v);
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
                seen.strip.emplace(v);
              }},
             {"mode",
              [&](auto& v, auto& g) {
                item.mode = file_mode(p, v, g);
                seen.mode.emplace(v);
              }},
             {"share", [&](auto& v, auto& g) {
                item.share = p.boolean(v, g, "share: true keeps a model in the host's cache");
                seen.share.emplace(v);
              }}});
}

/// What `share: true` cannot be combined with: the guest sees the cached blob itself, one
/// read-only file, so nothing can be unpacked, given a mode, or come from anywhere but the cache.
void check_shared_item(const YamlReader& p, const InstallItem& item, const ItemKeysSeen& seen) {
  const YAML::Node& share = *seen.share;
  const std::string field = item.field + ".share";
  if (item.unpack != fetch::UnpackFormat::none) {
    p.fail(share,
           field,
           "cannot share an archive (unpack: " + std::string(fetch::format_name(item.unpack)) +
               "): the guest sees the cached blob itself, read-only, and nothing unpacks it",
           "remove share (the tree is sent over SSH), or share the single files it holds as "
           "items of their own");
  }
  if (seen.file) {
    p.fail(share,
           field,
           "cannot share a 'file:' source: it is hashed in place and never enters the cache, "
           "and only the cache is shared with the VM",
           "remove share, or publish the file and name it with url: (https:// or oci://)");
  }
  if (seen.mode) {
    p.fail(share,
           field,
           "cannot be combined with mode: the guest reaches the cached blob through a "
           "read-only share, where its mode cannot be set",
           "remove mode (a shared model needs none), or remove share");
  }
}

/// The rules across an item's keys: one source, a dest, and archive-only or file-only keys
/// only where they apply.
void check_install_keys(const YamlReader& p,
                        const YAML::Node& node,
                        const std::string& field,
                        const InstallItem& item,
                        const ItemKeysSeen& seen) {
  if (seen.url == seen.file) {
    p.fail(node,
           field,
           seen.url ? "names both 'url' and 'file'" : "needs 'url' or 'file'",
           "url: https://… (or oci://REPO@sha256:…), or file: PATH relative to the recipe");
  }
  if (item.dest.empty()) {
    p.fail(node, field, "needs 'dest', the absolute guest path", "dest: /Users/lume/llama.cpp");
  }
  const bool archive = item.unpack != fetch::UnpackFormat::none;
  if (seen.strip && !archive) {
    p.fail(*seen.strip,
           field + ".strip_components",
           "only applies to archives",
           "add unpack: zip or unpack: tar.gz, or remove strip_components");
  }
  if (seen.files && !archive) {
    p.fail(*seen.files,
           field + ".files",
           "only applies to archives",
           "a single file is pinned by the item's own sha256");
  }
  if (seen.mode && archive) {
    p.fail(*seen.mode,
           field + ".mode",
           "only applies to single files (unpack: none)",
           "an archive's files keep their own modes (0755 for executables, else 0644)");
  }
}

InstallItem
parse_install_item(const YamlReader& p, const YAML::Node& node, const std::string& field) {
  InstallItem item;
  item.field = field;
  ItemKeysSeen seen;
  read_install_keys(p, node, field, item, seen);
  check_install_keys(p, node, field, item, seen);
  if (item.share) {
    check_shared_item(p, item, seen);
  }
  return item;
}

/// No two items may write the same path, or one into the other's tree.
void check_install_dests(const YamlReader& p,
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

void parse_install_section(const YamlReader& p,
                           const YAML::Node& n,
                           const std::string& f,
                           Recipe& recipe) {
  if (!n.IsSequence() || n.size() == 0) {
    p.fail(n,
           f,
           "must be a non-empty list of artifacts",
           "install: [{url: https://…/llama-bXXXX-bin-macos-arm64.tar.gz, unpack: "
           "tar.gz, strip_components: 1, dest: /Users/lume/llama.cpp}]");
  }
  for (std::size_t i = 0; i < n.size(); ++i) {
    recipe.install.push_back(parse_install_item(p, n[i], f + "[" + std::to_string(i) + "]"));
  }
  check_install_dests(p, n, recipe.install);
}

std::optional<std::string> dest_problem(const std::string& path) {
  if (path.empty() || path[0] != '/') {
    return "is not an absolute path";
  }
  if (path == "/") {
    return "is the root directory";
  }
  for (const char c : path) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\') {
      return "holds a control character or a backslash";
    }
  }
  if (path.back() == '/') {
    return "ends with '/'";
  }
  std::size_t at = 1;
  while (at <= path.size()) {
    const std::size_t end = std::min(path.find('/', at), path.size());
    const std::string part = path.substr(at, end - at);
    if (part.empty() || part == "." || part == "..") {
      return "is not a normal path (empty, '.' or '..' component)";
    }
    at = end + 1;
  }
  return std::nullopt;
}

} // namespace lume_unlock::recipe

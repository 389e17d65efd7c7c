#include "recipe_sections.hpp"

#include "recipe.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

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
          if (!is_display_size(d)) {
            p.fail(v, g, "'" + d + "' is not WIDTHxHEIGHT", "for example 1920x1080");
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

} // namespace lume_unlock::recipe

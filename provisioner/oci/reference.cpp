#include "oci/reference.hpp"

#include <vector>

namespace lume_unlock::oci {

namespace {

constexpr std::size_t k_max_repository_length = 255;
constexpr std::size_t k_max_tag_length = 128;

Error invalid(std::string_view text, const std::string& why) {
  return Error(ErrorCategory::usage,
               "invalid image reference '" + std::string(text) + "'",
               why,
               "write it as [registry/]repository[:tag][@sha256:<64 hex>], e.g. "
               "'ghcr.io/trycua/macos-tahoe-cua:latest'");
}

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool is_alnum(char c) {
  return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/// [a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*
bool is_path_component(std::string_view s) {
  std::size_t i = 0;
  auto alnum_run = [&] {
    std::size_t start = i;
    while (i < s.size() && is_lower_alnum(s[i])) {
      ++i;
    }
    return i > start;
  };
  if (!alnum_run()) {
    return false;
  }
  while (i < s.size()) {
    if (s[i] == '.') {
      ++i;
    } else if (s[i] == '_') {
      ++i;
      if (i < s.size() && s[i] == '_') {
        ++i;
      }
    } else if (s[i] == '-') {
      while (i < s.size() && s[i] == '-') {
        ++i;
      }
    } else {
      return false;
    }
    if (!alnum_run()) {
      return false;
    }
  }
  return true;
}

/// [A-Za-z0-9_][A-Za-z0-9._-]{0,127}
bool is_tag(std::string_view s) {
  if (s.empty() || s.size() > k_max_tag_length || !(is_alnum(s[0]) || s[0] == '_')) {
    return false;
  }
  for (char c : s.substr(1)) {
    if (!(is_alnum(c) || c == '_' || c == '.' || c == '-')) {
      return false;
    }
  }
  return true;
}

/// host[:port], host being dot-separated labels of [A-Za-z0-9-] (no leading/trailing '-').
bool is_registry(std::string_view s) {
  std::string_view host = s;
  if (auto colon = s.find(':'); colon != std::string_view::npos) {
    host = s.substr(0, colon);
    std::string_view port = s.substr(colon + 1);
    if (port.empty() || port.size() > 5) {
      return false;
    }
    for (char c : port) {
      if (c < '0' || c > '9') {
        return false;
      }
    }
  }
  if (host.empty()) {
    return false;
  }
  std::size_t start = 0;
  while (start <= host.size()) {
    auto dot = host.find('.', start);
    std::string_view label =
        host.substr(start, dot == std::string_view::npos ? host.npos : dot - start);
    if (label.empty() || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (!(is_alnum(c) || c == '-')) {
        return false;
      }
    }
    if (dot == std::string_view::npos) {
      break;
    }
    start = dot + 1;
  }
  return true;
}

std::vector<std::string_view> split(std::string_view s, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    auto at = s.find(separator, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? s.npos : at - start));
    if (at == std::string_view::npos) {
      return parts;
    }
    start = at + 1;
  }
}

bool looks_like_registry(std::string_view component) {
  return component.find('.') != std::string_view::npos ||
         component.find(':') != std::string_view::npos || component == "localhost";
}

} // namespace

std::string Reference::identifier() const {
  return digest ? digest->str() : tag.value_or("");
}

std::string Reference::str() const {
  if (digest) {
    return repository_path() + "@" + digest->str();
  }
  return repository_path() + ":" + tag.value_or("");
}

Reference Reference::pinned(const Digest& pin) const {
  Reference copy = *this;
  copy.tag.reset();
  copy.digest = pin;
  return copy;
}

Result<Reference> parse_reference(std::string_view text, const ReferenceDefaults& defaults) {
  if (text.empty()) {
    return invalid(text, "the reference is empty");
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      return invalid(text, "non-ASCII byte at position " + std::to_string(i));
    }
    if (c <= 0x20 || c == 0x7f) {
      return invalid(text, "whitespace or control character at position " + std::to_string(i));
    }
  }

  Reference ref;
  std::string_view name = text;
  if (auto at = text.find('@'); at != std::string_view::npos) {
    name = text.substr(0, at);
    auto digest = Digest::parse(text.substr(at + 1));
    if (!digest) {
      return invalid(text, "bad digest: " + digest.error().why());
    }
    ref.digest = digest.value();
  }

  // A ':' after the last '/' starts the tag; earlier colons belong to a registry port.
  auto last_slash = name.rfind('/');
  auto tag_colon = name.rfind(':');
  if (tag_colon != std::string_view::npos &&
      (last_slash == std::string_view::npos || tag_colon > last_slash)) {
    std::string_view tag = name.substr(tag_colon + 1);
    name = name.substr(0, tag_colon);
    if (tag.empty()) {
      return invalid(text, "empty tag after ':'");
    }
    if (!is_tag(tag)) {
      return invalid(text,
                     "tag '" + std::string(tag) + "' must match [A-Za-z0-9_][A-Za-z0-9._-]{0,127}");
    }
    ref.tag = std::string(tag);
  }
  if (name.empty()) {
    return invalid(text, "missing the repository name");
  }

  auto components = split(name, '/');
  // Traversal first, so "../x" is not mistaken for a registry named "..".
  for (std::string_view component : components) {
    if (component == "." || component == "..") {
      return invalid(
          text, "path component '" + std::string(component) + "' is not allowed (path traversal)");
    }
  }
  std::size_t first_path = 0;
  if (components.size() > 1 && looks_like_registry(components[0])) {
    if (!is_registry(components[0])) {
      return invalid(text,
                     "registry '" + std::string(components[0]) +
                         "' must be a host name or address with an optional :port");
    }
    ref.registry = std::string(components[0]);
    first_path = 1;
  } else {
    ref.registry = defaults.registry;
  }
  for (std::size_t i = first_path; i < components.size(); ++i) {
    std::string_view component = components[i];
    if (component.empty()) {
      return invalid(text, "empty path component (leading, trailing or double '/')");
    }
    if (!is_path_component(component)) {
      return invalid(text,
                     "repository component '" + std::string(component) +
                         "' must match [a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*");
    }
  }
  std::string_view repository = name;
  if (first_path == 1) {
    repository.remove_prefix(components[0].size() + 1);
  }
  if (repository.size() > k_max_repository_length) {
    return invalid(text,
                   "repository is longer than " + std::to_string(k_max_repository_length) +
                       " characters");
  }
  ref.repository = std::string(repository);
  if (!ref.tag && !ref.digest) {
    ref.tag = defaults.tag;
  }
  return ref;
}

} // namespace lume_unlock::oci

#include "oci/reference.hpp"

#include "util/sha256.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::oci {

namespace {

constexpr std::size_t k_max_repository_length = 255;
constexpr std::size_t k_max_tag_length = 128;
const std::string k_host_characters =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-";

Error invalid(std::string_view text, const std::string& why) {
  return Error(ErrorCategory::usage,
               "invalid image reference '" + std::string(text) + "'",
               why,
               "write it as [registry/]repository[:tag][@sha256:<64 hex>], e.g. "
               "'ghcr.io/trycua/macos-tahoe-cua:latest'");
}

/// [a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*
bool is_path_component(std::string_view s) {
  constexpr std::string_view alnum = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t run_end = s.find_first_not_of(alnum, i);
    if (run_end == i) {
      return false; // a separator without [a-z0-9]+ before it
    }
    if (run_end == std::string_view::npos) {
      return true;
    }
    i = std::min(s.find_first_of(alnum, run_end), s.size());
    const std::string_view separator = s.substr(run_end, i - run_end);
    if (i == s.size() || !(separator == "." || separator == "_" || separator == "__" ||
                           separator.find_first_not_of('-') == std::string_view::npos)) {
      return false;
    }
  }
  return false;
}

/// [A-Za-z0-9_][A-Za-z0-9._-]{0,127}
bool is_tag(std::string_view s) {
  return !s.empty() && s.size() <= k_max_tag_length && s[0] != '.' && s[0] != '-' &&
         s.find_first_not_of(k_host_characters + std::string("_.")) == std::string_view::npos;
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

/// Dot-separated labels of [A-Za-z0-9-], none empty or with a leading or trailing '-'.
bool is_host_name(std::string_view host) {
  for (std::string_view label : split(host, '.')) {
    if (label.empty() || label.front() == '-' || label.back() == '-' ||
        label.find_first_not_of(k_host_characters) != std::string_view::npos) {
      return false;
    }
  }
  return true;
}

/// "[" IPv6 address "]", as in a URL (RFC 3986 section 3.2.2).
bool is_bracketed_ipv6(std::string_view host) {
  if (host.size() < 3 || host.front() != '[' || host.back() != ']') {
    return false;
  }
  const std::string address(host.substr(1, host.size() - 2));
  in6_addr parsed{};
  return inet_pton(AF_INET6, address.c_str(), &parsed) == 1;
}

/// Why `registry` (host[:port], the host a name or a bracketed IPv6 address) is not one, or
/// nothing when it is. A port is a number from 1 to 65535, so a bad one is refused here and not
/// later as a curl URL error (issue 27).
std::optional<std::string> registry_problem(std::string_view registry) {
  const std::string quoted = "registry '" + std::string(registry) + "'";
  std::string_view host = registry;
  std::optional<std::string_view> port;
  const std::size_t host_end = registry.front() == '[' ? registry.find(']') : 0;
  if (registry.front() == '[' && host_end == std::string_view::npos) {
    return quoted + " opens '[' without the closing ']' of an IPv6 address";
  }
  if (auto colon = registry.find(':', host_end); colon != std::string_view::npos) {
    host = registry.substr(0, colon);
    port = registry.substr(colon + 1);
  }
  const bool host_ok = host.front() == '[' ? is_bracketed_ipv6(host) : is_host_name(host);
  if (!host_ok) {
    return quoted + " must be a host name or address with an optional :port";
  }
  if (port) {
    const bool digits = !port->empty() && port->size() <= 5 &&
                        port->find_first_not_of("0123456789") == std::string_view::npos;
    const long value = digits ? std::stol(std::string(*port)) : 0;
    if (value < 1 || value > 65535) {
      return quoted + " has port '" + std::string(*port) + "'; a port is a number from 1 to 65535";
    }
  }
  return std::nullopt;
}

bool looks_like_registry(std::string_view component) {
  return component.find('.') != std::string_view::npos ||
         component.find(':') != std::string_view::npos || component == "localhost";
}

/// Printable ASCII only: no byte above 0x7f, no whitespace or control character.
Status check_characters(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      return invalid(text, "non-ASCII byte at position " + std::to_string(i));
    }
    if (c <= 0x20 || c == 0x7f) {
      return invalid(text, "whitespace or control character at position " + std::to_string(i));
    }
  }
  return ok_status();
}

/// Each repository path component (from `first`, past the registry) is non-empty and lower case.
Status check_path_components(std::string_view text,
                             const std::vector<std::string_view>& components,
                             std::size_t first) {
  for (std::size_t i = first; i < components.size(); ++i) {
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
  return ok_status();
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
  LUME_UNLOCK_TRY(check_characters(text));
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
    if (auto problem = registry_problem(components[0])) {
      return invalid(text, *problem);
    }
    ref.registry = std::string(components[0]);
    first_path = 1;
  } else {
    ref.registry = defaults.registry;
  }
  LUME_UNLOCK_TRY(check_path_components(text, components, first_path));
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

namespace {

Error invalid_digest(std::string_view text, const std::string& why) {
  return Error(ErrorCategory::usage,
               "invalid digest '" + std::string(text) + "'",
               why,
               "a digest is 'sha256:' followed by 64 lower-case hex characters");
}

bool is_lower_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

} // namespace

Result<Digest> Digest::parse(std::string_view text) {
  if (text.empty()) {
    return invalid_digest(text, "the digest is empty");
  }
  auto colon = text.find(':');
  if (colon == std::string_view::npos) {
    return invalid_digest(text, "missing the algorithm prefix 'sha256:'");
  }
  std::string_view algorithm = text.substr(0, colon);
  if (algorithm != "sha256") {
    return invalid_digest(text,
                          "unsupported algorithm '" + std::string(algorithm) + "' (only sha256)");
  }
  std::string_view hex = text.substr(colon + 1);
  if (hex.size() != 64) {
    return invalid_digest(
        text, "expected 64 hex characters after 'sha256:', got " + std::to_string(hex.size()));
  }
  for (char c : hex) {
    if (!is_lower_hex(c)) {
      return invalid_digest(text,
                            "the hex part may only contain lower-case hex characters [0-9a-f]");
    }
  }
  return Digest(std::string(hex));
}

Digest Digest::of_bytes(std::string_view bytes) {
  return Digest(util::sha256_hex(bytes));
}

Result<Digest> Digest::from_sha256_hex(std::string_view hex) {
  return parse("sha256:" + std::string(hex));
}

} // namespace lume_unlock::oci

#include "fetch/mirror_map.hpp"

#include "util/http_client.hpp"
#include "util/text_check.hpp"

#include <cstdlib>
#include <sstream>

namespace lume_unlock::fetch {

namespace {

constexpr const char* k_example = "https://github.com/=https://mirror.example/github/";

/// An https:// URL with a host, ending in '/'.
bool is_prefix_url(const std::string& text) {
  constexpr std::string_view scheme = "https://";
  return text.size() > scheme.size() + 1 && text.compare(0, scheme.size(), scheme) == 0 &&
         text[scheme.size()] != '/' && text.back() == '/' &&
         text.find_first_of(" \t\r\n@") == std::string::npos;
}

} // namespace

Status MirrorMap::add(std::string_view rule, const std::string& origin) {
  const auto equals = rule.find("=https://");
  const std::string from(rule.substr(0, equals == std::string_view::npos ? rule.size() : equals));
  const std::string to(equals == std::string_view::npos ? "" : rule.substr(equals + 1));
  if (!is_prefix_url(from) || !is_prefix_url(to)) {
    // Each side redacted: a mirror URL may carry credentials, which are refused, never shown.
    const std::string shown =
        util::redact_url(from) +
        (equals == std::string_view::npos ? std::string() : "=" + util::redact_url(to));
    return Error(ErrorCategory::usage,
                 origin,
                 util::quote_for_message(shown) +
                     " is not a mirror rule FROM=TO of two https:// prefixes ending in '/'",
                 std::string("for example ") + k_example);
  }
  m_rules.push_back({from, to});
  return ok_status();
}

std::string MirrorMap::apply(const std::string& url) const {
  const Rule* best = nullptr;
  for (const Rule& rule : m_rules) {
    if (url.compare(0, rule.from.size(), rule.from) == 0 &&
        (best == nullptr || rule.from.size() > best->from.size())) {
      best = &rule;
    }
  }
  return best == nullptr ? url : best->to + url.substr(best->from.size());
}

Result<MirrorMap> MirrorMap::from_environment(const std::vector<std::string>& extra) {
  MirrorMap map;
  if (const char* endpoint = std::getenv("HF_ENDPOINT"); endpoint != nullptr && *endpoint) {
    std::string to = endpoint;
    if (to.back() != '/') {
      to += '/';
    }
    LUME_UNLOCK_TRY(map.add("https://huggingface.co/=" + to, "HF_ENDPOINT"));
  }
  if (const char* rules = std::getenv("LUME_UNLOCK_MIRROR"); rules != nullptr) {
    std::istringstream words(rules);
    std::string rule;
    while (words >> rule) {
      LUME_UNLOCK_TRY(map.add(rule, "LUME_UNLOCK_MIRROR"));
    }
  }
  for (const std::string& rule : extra) {
    LUME_UNLOCK_TRY(map.add(rule, "--mirror"));
  }
  return map;
}

} // namespace lume_unlock::fetch

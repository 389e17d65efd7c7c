#pragma once

#include "util/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::fetch {

/// Where to fetch an https source from instead of its publisher, for air-gapped and proxied
/// sites: rules "FROM=TO", each FROM an https URL prefix ("https://github.com/") and TO the
/// prefix that replaces it ("https://mirror.example/github/"). The recipe, the pinned digests,
/// the cache key and the provenance keep the publisher's URL; only the request goes elsewhere,
/// and the bytes are verified the same way.
class MirrorMap {
public:
  struct Rule {
    std::string from;
    std::string to;
  };

  /// Rules from `LUME_UNLOCK_MIRROR` (whitespace-separated FROM=TO rules) and `HF_ENDPOINT`
  /// (Hugging Face's own variable: https://huggingface.co/ → its value), then `extra` (the
  /// --mirror options). Fails (usage) naming the variable or option and the rule.
  static Result<MirrorMap> from_environment(const std::vector<std::string>& extra = {});

  /// Adds one "FROM=TO" rule; `origin` names where it came from in errors. Both sides must be
  /// https:// URLs with a host and end in '/', so a rule never splices a host name.
  Status add(std::string_view rule, const std::string& origin);

  /// `url` with the longest matching FROM replaced by its TO; `url` itself when none matches.
  std::string apply(const std::string& url) const;

  const std::vector<Rule>& rules() const { return m_rules; }

private:
  std::vector<Rule> m_rules;
};

} // namespace lume_unlock::fetch

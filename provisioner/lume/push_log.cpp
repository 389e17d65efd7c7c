#include "lume/push_log.hpp"

#include "util/text.hpp"

namespace lume_unlock::lume {

std::optional<PushFailure> find_push_failure(std::string_view log_since_push,
                                             const std::string& image_name,
                                             const std::vector<std::string>& tags) {
  const std::string prefix = "Background push failed for image: " + image_name + ":" +
                             util::join(tags, ",") + " - Error: ";
  std::vector<std::string> errors;
  std::size_t start = 0;
  while (start < log_since_push.size()) {
    std::size_t end = log_since_push.find('\n', start);
    if (end == std::string_view::npos) {
      end = log_since_push.size();
    }
    const std::string_view line = log_since_push.substr(start, end - start);
    start = end + 1;
    if (util::starts_with(line, prefix)) {
      if (errors.size() > 3) {
        errors.erase(errors.begin(), errors.end() - 3);
      }
      return PushFailure{std::string(line.substr(prefix.size())), errors};
    }
    // Logger.swift: "[<ISO8601 timestamp>] ERROR: <message>".
    if (!line.empty() && line.front() == '[' && line.find("] ERROR: ") != std::string_view::npos) {
      errors.emplace_back(line);
    }
  }
  return std::nullopt;
}

} // namespace lume_unlock::lume

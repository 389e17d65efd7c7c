#include "util/secret_scrub.hpp"

#include <algorithm>

namespace lume_unlock::util {

std::string scrub_secrets(std::string text, std::vector<std::string> secrets) {
  secrets.erase(std::remove(secrets.begin(), secrets.end(), std::string()), secrets.end());
  std::sort(secrets.begin(), secrets.end(), [](const std::string& a, const std::string& b) {
    return a.size() > b.size();
  });
  const std::string marker = k_scrubbed_marker;
  for (const std::string& secret : secrets) {
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + marker.size())) {
      text.replace(at, secret.size(), marker);
    }
  }
  return text;
}

} // namespace lume_unlock::util

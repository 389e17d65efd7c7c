#include "apply/guest_file_hashes.hpp"

#include "guest/shell_quote.hpp"
#include "util/sha256.hpp"

#include <sstream>

namespace lume_unlock::apply {

Result<std::map<std::string, std::string>> hash_guest_files(guest::GuestSession& session,
                                                            const std::vector<std::string>& paths) {
  std::map<std::string, std::string> found;
  if (paths.empty()) {
    return found;
  }
  std::vector<std::string> words = {"shasum", "-a", "256"};
  words.insert(words.end(), paths.begin(), paths.end());
  LUME_UNLOCK_TRY_ASSIGN(auto command, guest::shell_join(words));
  // Missing files print nothing on stdout: they are what the caller reports as missing.
  LUME_UNLOCK_TRY_ASSIGN(auto result, session.run(command + " 2>/dev/null"));
  std::istringstream lines(result.stdout_text);
  std::string line;
  while (std::getline(lines, line)) {
    // "<64 hex>  <path>": two spaces, the second a '*' in binary mode.
    if (line.size() > 66 && util::is_sha256_hex(line.substr(0, 64))) {
      found[line.substr(66)] = line.substr(0, 64);
    }
  }
  return found;
}

} // namespace lume_unlock::apply

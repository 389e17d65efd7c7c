#include "guest/file_hashes.hpp"

#include "guest/shell_quote.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <sstream>

namespace lume_unlock::guest {

std::map<std::string, std::string> parse_shasum_output(const std::string& output) {
  std::map<std::string, std::string> digests;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.size() > 66 && line[64] == ' ' && (line[65] == ' ' || line[65] == '*') &&
        util::is_sha256_hex(line.substr(0, 64))) {
      digests[line.substr(66)] = line.substr(0, 64);
    }
  }
  return digests;
}

std::string link_state(const std::string& target) {
  return "-> " + target;
}

Result<std::map<std::string, std::string>> hash_guest_files(GuestSession& session,
                                                            const std::vector<std::string>& paths) {
  if (paths.empty()) {
    return std::map<std::string, std::string>{};
  }
  std::vector<std::string> words = {"shasum", "-a", "256"};
  for (const auto& path : paths) {
    // shasum prints a name holding a newline or backslash escaped ("\<hex>  a\nb"): such a
    // line would never match its path, so the file would read as missing. Refuse it instead.
    for (const char c : path) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\') {
        return Error(ErrorCategory::usage,
                     "hashing guest files",
                     "the path " + util::quote_for_message(path) +
                         " holds a control character or a backslash",
                     "use paths of printable characters without '\\'");
      }
    }
    words.push_back(path);
  }
  LUME_UNLOCK_TRY_ASSIGN(auto command, shell_join(words));
  // Then each link by its position in `paths` ("link <index> <target>"): readlink prints the
  // target as written, and the index keeps odd targets from being mistaken for paths.
  std::vector<std::string> quoted(words.begin() + 3, words.end());
  LUME_UNLOCK_TRY_ASSIGN(auto list, shell_join(quoted));
  command += " 2>/dev/null\ni=0; for p in " + list +
             "; do [ -L \"$p\" ] && printf 'link %s %s\\n' \"$i\" \"$(readlink \"$p\")\"; "
             "i=$((i+1)); done; exit 0";
  LUME_UNLOCK_TRY_ASSIGN(auto result, session.run(command));
  auto digests = parse_shasum_output(result.stdout_text);
  std::istringstream lines(result.stdout_text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!util::starts_with(line, "link ")) {
      continue;
    }
    const auto space = line.find(' ', 5);
    const std::string digits = line.substr(5, space == std::string::npos ? 0 : space - 5);
    if (space == std::string::npos || digits.empty() ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const std::size_t index = std::stoul(digits);
    if (index < paths.size()) {
      digests[paths[index]] = link_state(line.substr(space + 1));
    }
  }
  return digests;
}

} // namespace lume_unlock::guest

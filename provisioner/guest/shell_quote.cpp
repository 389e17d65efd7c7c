#include "guest/shell_quote.hpp"

namespace lume_unlock::guest {

Result<std::string> shell_quote(std::string_view word) {
  auto nul = word.find('\0');
  if (nul != std::string_view::npos) {
    return Error(ErrorCategory::usage,
                 "cannot pass a value to the guest's shell",
                 "it contains a NUL byte at offset " + std::to_string(nul) + " of " +
                     std::to_string(word.size()),
                 "remove the NUL byte; shell arguments are C strings");
  }
  std::string quoted;
  quoted.reserve(word.size() + 2);
  quoted += '\'';
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''"; // close the quote, an escaped quote, reopen
    } else {
      quoted += c;
    }
  }
  quoted += '\'';
  return quoted;
}

Result<std::string> shell_join(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& word : words) {
    LUME_UNLOCK_TRY_ASSIGN(auto quoted, shell_quote(word));
    if (!line.empty()) {
      line += ' ';
    }
    line += quoted;
  }
  return line;
}

} // namespace lume_unlock::guest

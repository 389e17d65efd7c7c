#include "guest/shell_quote.hpp"

#include "util/text_check.hpp"

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

Status require_shell_name(std::string_view name) {
  const auto is_letter = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
  };
  bool valid = !name.empty() && is_letter(name[0]);
  for (char c : name) {
    valid = valid && (is_letter(c) || (c >= '0' && c <= '9'));
  }
  if (!valid) {
    return Error(ErrorCategory::usage,
                 "cannot set the variable " + util::quote_for_message(name) + " in the guest",
                 "a variable name is letters, digits and '_', not starting with a digit",
                 "rename the variable");
  }
  return ok_status();
}

} // namespace lume_unlock::guest

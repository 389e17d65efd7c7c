#include "policy/guard.hpp"

namespace lume_unlock::policy {
namespace {

bool is_blank(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r';
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && is_blank(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back()))
    s.remove_suffix(1);
  return s;
}

} // namespace

bool guard_lists(std::string_view guard_text, std::string_view executable_path) noexcept {
  if (executable_path.empty() || executable_path.front() != '/')
    return false;
  while (!guard_text.empty()) {
    const std::size_t end = guard_text.find('\n');
    const std::string_view raw =
        end == std::string_view::npos ? guard_text : std::string_view(guard_text.data(), end);
    guard_text.remove_prefix(end == std::string_view::npos ? guard_text.size() : end + 1);
    const std::string_view entry = trim(raw);
    if (entry.empty() || entry.front() == '#' || entry.front() != '/')
      continue;
    if (entry == executable_path)
      return true;
  }
  return false;
}

} // namespace lume_unlock::policy

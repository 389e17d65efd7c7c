#include "options.hpp"

#include <cctype>

namespace lume_sim {

namespace {

bool all_digits(const std::string& s) {
  if (s.empty() || s.size() > 9) {
    return false;
  }
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

/// Splits "METHOD PATH" into its two parts.
bool split_route(const std::string& text, std::string& method, std::string& path) {
  auto space = text.find(' ');
  if (space == std::string::npos) {
    return false;
  }
  method = text.substr(0, space);
  path = text.substr(space + 1);
  return !method.empty() && !path.empty() && path.front() == '/' &&
         path.find(' ') == std::string::npos;
}

/// Reads a trailing "xN" off `text` into `count`.
bool take_count(std::string& text, std::optional<int>& count) {
  auto x = text.rfind('x');
  if (x == std::string::npos || !all_digits(text.substr(x + 1))) {
    return true;
  }
  count = std::stoi(text.substr(x + 1));
  text.erase(x);
  return *count > 0;
}

} // namespace

std::optional<Fault> parse_fault(const std::string& spec, std::string& error) {
  error = "expected 'METHOD PATH=STATUS[xN][:BODY]', got '" + spec + "'";
  auto eq = spec.find('=');
  if (eq == std::string::npos) {
    return std::nullopt;
  }
  Fault f;
  if (!split_route(spec.substr(0, eq), f.method, f.path)) {
    return std::nullopt;
  }
  std::string rest = spec.substr(eq + 1);
  auto colon = rest.find(':');
  if (colon != std::string::npos) {
    f.body = rest.substr(colon + 1);
    rest.erase(colon);
  }
  if (!take_count(rest, f.remaining) || !all_digits(rest)) {
    return std::nullopt;
  }
  f.status = std::stoi(rest);
  if (f.status < 100 || f.status > 599) {
    return std::nullopt;
  }
  error.clear();
  return f;
}

std::optional<Drop> parse_drop(const std::string& spec, std::string& error) {
  error = "expected 'METHOD PATH[=xN]', got '" + spec + "'";
  Drop d;
  auto eq = spec.find('=');
  if (!split_route(spec.substr(0, eq), d.method, d.path)) {
    return std::nullopt;
  }
  if (eq != std::string::npos) {
    std::string count = spec.substr(eq + 1);
    if (count.size() < 2 || count[0] != 'x' || !all_digits(count.substr(1)) ||
        std::stoi(count.substr(1)) <= 0) {
      return std::nullopt;
    }
    d.remaining = std::stoi(count.substr(1));
  }
  error.clear();
  return d;
}

bool path_matches(const std::string& pattern, const std::string& path) {
  if (!pattern.empty() && pattern.back() == '*') {
    return path.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
  }
  return pattern == path;
}

} // namespace lume_sim

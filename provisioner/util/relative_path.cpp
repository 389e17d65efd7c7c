#include "relative_path.hpp"

#include <vector>

namespace lume_unlock::util {

namespace {

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    auto slash = path.find('/');
    auto part = path.substr(0, slash);
    if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    if (slash == std::string_view::npos) {
      break;
    }
    path.remove_prefix(slash + 1);
  }
  return parts;
}

} // namespace

std::optional<PathProblem> relative_path_problem(std::string_view path) {
  if (path.empty()) {
    return PathProblem::empty;
  }
  if (path.find('\0') != std::string_view::npos) {
    return PathProblem::nul_byte;
  }
  if (path.front() == '/') {
    return PathProblem::absolute;
  }
  for (auto part : components(path)) {
    if (part == "..") {
      return PathProblem::parent_component;
    }
  }
  return std::nullopt;
}

const char* describe(PathProblem problem) {
  switch (problem) {
  case PathProblem::empty:
    return "is empty";
  case PathProblem::absolute:
    return "is an absolute path";
  case PathProblem::parent_component:
    return "contains a '..' component";
  case PathProblem::nul_byte:
    return "contains a NUL byte";
  }
  return "is not a safe relative path";
}

std::string normalize_relative_path(std::string_view path) {
  std::string normalized;
  for (auto part : components(path)) {
    if (!normalized.empty()) {
      normalized += '/';
    }
    normalized.append(part);
  }
  return normalized;
}

} // namespace lume_unlock::util

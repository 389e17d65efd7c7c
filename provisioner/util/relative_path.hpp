#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::util {

/// Why a path is not a safe relative path, or nothing when it is.
enum class PathProblem { empty, absolute, parent_component, nul_byte };

/// Checks that `path` stays inside whatever directory it is taken relative to: not empty, not
/// absolute, no ".." component, no NUL byte. "." components and repeated or trailing slashes are
/// harmless and allowed.
std::optional<PathProblem> relative_path_problem(std::string_view path);

/// Short lower-case text for a problem, to follow the quoted path in a message
/// ("is an absolute path", "contains a '..' component", ...).
const char* describe(PathProblem problem);

/// The canonical spelling of a safe relative path: "." components and repeated or trailing
/// slashes removed ("./a//b/" -> "a/b"). An all-"." path gives "". The caller has checked it with
/// relative_path_problem().
std::string normalize_relative_path(std::string_view path);

} // namespace lume_unlock::util

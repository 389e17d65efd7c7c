#pragma once

#include "util/result.hpp"

#include <string>

namespace lume_unlock::pipeline {

/// Ok when `dir` can hold or already holds lume-unlock's state: it does not exist yet, or it is
/// a directory this user may read and enter. Else a usage error naming the directory and why
/// (empty, not a directory, not readable), so a command does not report a missing record for
/// a state directory it could never have read (issue 27).
Status check_state_dir_readable(const std::string& dir);

} // namespace lume_unlock::pipeline

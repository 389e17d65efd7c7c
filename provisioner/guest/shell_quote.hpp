#pragma once

#include "util/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::guest {

/// The one way to put a value into a remote command line: `word` as a single POSIX shell word.
/// The result is wrapped in single quotes, with each `'` written as `'\''`, so the shell takes
/// every byte literally ($, `, \, globs, spaces, newlines, non-ASCII). The empty string becomes
/// `''`. A NUL byte cannot be passed through a shell at all: usage error naming the value's length
/// and the offset of the first NUL.
Result<std::string> shell_quote(std::string_view word);

/// `words` quoted with shell_quote() and joined with single spaces: a command line that runs
/// argv = words in the guest. The first NUL found fails the whole line.
Result<std::string> shell_join(const std::vector<std::string>& words);

/// Checks that `name` can stand unquoted as a shell variable name ("NAME=value", "unset NAME"):
/// [A-Za-z_][A-Za-z0-9_]*. Anything else is a usage error naming it, never a word the shell
/// would read as code.
Status require_shell_name(std::string_view name);

} // namespace lume_unlock::guest

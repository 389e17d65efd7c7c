#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::util {

/// Length of the valid UTF-8 sequence starting at `text[pos]`, or 0 when it is not valid
/// (overlong forms, surrogates and code points above U+10FFFF are invalid).
std::size_t utf8_sequence_length(std::string_view text, std::size_t pos);

/// `text` in single quotes for an error message: printable text (including UTF-8) as is, tab as
/// \t, every other control byte, DEL and every byte that is not valid UTF-8 as \xNN, so a message
/// never carries a raw newline or escape sequence to the terminal.
std::string quote_for_message(std::string_view text);

/// Why `text` is not safe to store in a one-line-per-value file or an XML plist, or nothing when
/// it is: "contains a control character (0x0a at byte 4); only tab is allowed" (C0 controls
/// other than tab, and DEL) or "is not valid UTF-8 (at byte 2)".
std::optional<std::string> text_problem(std::string_view text);

} // namespace lume_unlock::util

#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::util {

/// `text` in single quotes for an error message: printable text (including UTF-8) as is, tab as
/// \t, every other control byte, DEL and every byte that is not valid UTF-8 as \xNN, so a message
/// never carries a raw newline or escape sequence to the terminal.
std::string quote_for_message(std::string_view text);

/// Why `text` is not safe to store in a one-line-per-value file or an XML plist, or nothing when
/// it is: "contains a control character (0x0a at byte 4); only tab is allowed" (C0 controls
/// other than tab, and DEL) or "is not valid UTF-8 (at byte 2)".
std::optional<std::string> text_problem(std::string_view text);

/// A word of outside text longer than this many characters is cut (issue 27: a 120 KB rejected
/// reference was echoed whole). Above the 255 of names and references, so a value one over
/// their limit is still shown whole.
inline constexpr std::size_t k_display_word_limit = 320;
/// What is kept of a cut word, in characters.
inline constexpr std::size_t k_display_word_kept = 256;
/// A whole text longer than this many characters is cut, whatever its words.
inline constexpr std::size_t k_display_text_limit = 8192;
/// What is kept of a cut text, in characters.
inline constexpr std::size_t k_display_text_kept = 6000;

/// `text` made safe to print on a terminal: newline and tab stay, every other C0 control byte,
/// DEL, every byte of a C1 control (U+0080..U+009F) and every byte that is not valid UTF-8
/// becomes \xNN, so outside text can neither retitle nor recolour the terminal. A word (a run
/// without space, tab or newline) of more than k_display_word_limit characters keeps its first
/// k_display_word_kept and gains "… (N bytes)"; so does a whole text of more than
/// k_display_text_limit. Applying it twice gives the same text as applying it once.
std::string display_text(std::string_view text);

/// Longest part of a server's body that error messages quote.
inline constexpr std::size_t k_body_preview_limit = 256;

/// A printable preview of a response body for an error message: bytes outside printable ASCII
/// as '.', at most k_body_preview_limit bytes, then "... (N bytes)" when it was cut.
std::string body_preview(const std::string& body);

/// What a scrubbed secret is replaced with.
inline constexpr const char* k_scrubbed_marker = "[scrubbed]";

/// `text` with every occurrence of each non-empty value in `secrets` replaced by
/// k_scrubbed_marker. Longer secrets are replaced first, so a secret that contains another is
/// scrubbed whole and no part of it is left behind. Empty values are ignored (an unset variable
/// must not turn every gap between characters into a marker).
std::string scrub_secrets(std::string text, std::vector<std::string> secrets);

} // namespace lume_unlock::util

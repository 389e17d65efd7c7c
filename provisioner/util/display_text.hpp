#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lume_unlock::util {

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

} // namespace lume_unlock::util

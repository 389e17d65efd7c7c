#include "display_text.hpp"

#include "text_check.hpp"

#include <cstdint>
#include <cstdio>

namespace lume_unlock::util {

namespace {

bool is_word_break(char c) {
  return c == ' ' || c == '\n' || c == '\t';
}

bool is_c1_control(std::string_view sequence) {
  return sequence.size() == 2 && static_cast<std::uint8_t>(sequence[0]) == 0xC2 &&
         static_cast<std::uint8_t>(sequence[1]) < 0xA0;
}

void append_hex(std::string& out, std::uint8_t byte) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "\\x%02x", byte);
  out += buffer;
}

/// `text` with every unsafe byte as \xNN; the result is valid UTF-8 without controls other
/// than newline and tab.
std::string escape_controls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto byte = static_cast<std::uint8_t>(text[pos]);
    if (byte == '\n' || byte == '\t') {
      out += static_cast<char>(byte);
      ++pos;
      continue;
    }
    if (byte < 0x20 || byte == 0x7F) {
      append_hex(out, byte);
      ++pos;
      continue;
    }
    const std::size_t length = utf8_sequence_length(text, pos);
    if (length == 0) {
      append_hex(out, byte);
      ++pos;
      continue;
    }
    const std::string_view sequence = text.substr(pos, length);
    if (is_c1_control(sequence)) {
      for (char c : sequence) {
        append_hex(out, static_cast<std::uint8_t>(c));
      }
    } else {
      out.append(sequence);
    }
    pos += length;
  }
  return out;
}

/// Where the `count`-th character of valid UTF-8 `text` starts (text.size() when it has fewer).
std::size_t character_offset(std::string_view text, std::size_t count) {
  std::size_t characters = 0;
  for (std::size_t pos = 0; pos < text.size(); ++pos) {
    if ((static_cast<std::uint8_t>(text[pos]) & 0xC0) != 0x80) {
      if (characters == count) {
        return pos;
      }
      ++characters;
    }
  }
  return text.size();
}

std::size_t character_count(std::string_view text) {
  std::size_t characters = 0;
  for (char c : text) {
    characters += (static_cast<std::uint8_t>(c) & 0xC0) != 0x80 ? 1 : 0;
  }
  return characters;
}

/// `text` cut to `kept` characters plus a marker naming its size, when it has more than `limit`.
std::string cut(std::string_view text, std::size_t limit, std::size_t kept) {
  if (character_count(text) <= limit) {
    return std::string(text);
  }
  return std::string(text.substr(0, character_offset(text, kept))) + "… (" +
         std::to_string(text.size()) + " bytes)";
}

} // namespace

std::string display_text(std::string_view text) {
  const std::string escaped = escape_controls(text);
  std::string out;
  out.reserve(escaped.size());
  std::size_t pos = 0;
  while (pos < escaped.size()) {
    if (is_word_break(escaped[pos])) {
      out += escaped[pos];
      ++pos;
      continue;
    }
    std::size_t end = pos;
    while (end < escaped.size() && !is_word_break(escaped[end])) {
      ++end;
    }
    out += cut(std::string_view(escaped).substr(pos, end - pos),
               k_display_word_limit,
               k_display_word_kept);
    pos = end;
  }
  return cut(out, k_display_text_limit, k_display_text_kept);
}

} // namespace lume_unlock::util

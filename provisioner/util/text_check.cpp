#include "util/text_check.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace lume_unlock::util {

namespace {

std::string hex_byte(std::uint8_t byte) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "%02x", byte);
  return buffer;
}

bool is_word_break(char c) {
  return c == ' ' || c == '\n' || c == '\t';
}

bool is_c1_control(std::string_view sequence) {
  return sequence.size() == 2 && static_cast<std::uint8_t>(sequence[0]) == 0xC2 &&
         static_cast<std::uint8_t>(sequence[1]) < 0xA0;
}

/// Length of the valid UTF-8 sequence at `text[pos]`, or 0 when it is not valid (overlong
/// forms, surrogates and code points above U+10FFFF are invalid).
std::size_t utf8_sequence_length(std::string_view text, std::size_t pos) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(text[i]); };
  const std::uint8_t lead = byte(pos);
  if (lead < 0x80) {
    return 1;
  }
  std::size_t length = 0;
  std::uint32_t code = 0;
  std::uint32_t minimum = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
    code = lead & 0x1F;
    minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    code = lead & 0x0F;
    minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    code = lead & 0x07;
    minimum = 0x10000;
  } else {
    return 0;
  }
  if (pos + length > text.size()) {
    return 0;
  }
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) {
      return 0;
    }
    code = (code << 6) | (byte(pos + i) & 0x3F);
  }
  if (code < minimum || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
    return 0;
  }
  return length;
}

/// `text` with every C0 control byte, DEL and byte that is not valid UTF-8 as \xNN, and C1
/// controls too when `c1`; tab becomes `tab`, newline stays when `newline`.
std::string escape(std::string_view text, std::string_view tab, bool newline, bool c1) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const auto byte = static_cast<std::uint8_t>(text[pos]);
    const std::size_t length = byte < 0x20 || byte == 0x7F ? 0 : utf8_sequence_length(text, pos);
    const std::string_view piece = text.substr(pos, std::max<std::size_t>(length, 1));
    if (byte == '\t') {
      out += tab;
    } else if (byte == '\n' && newline) {
      out += '\n';
    } else if (length == 0 || (c1 && is_c1_control(piece))) {
      for (char c : piece) {
        out += "\\x" + hex_byte(static_cast<std::uint8_t>(c));
      }
    } else {
      out.append(piece);
    }
    pos += piece.size();
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

std::string quote_for_message(std::string_view text) {
  return "'" + escape(text, "\\t", false, false) + "'";
}

std::optional<std::string> text_problem(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto byte = static_cast<std::uint8_t>(text[pos]);
    if ((byte < 0x20 && byte != '\t') || byte == 0x7F) {
      return "contains a control character (0x" + hex_byte(byte) + " at byte " +
             std::to_string(pos) + "); only tab is allowed";
    }
    const std::size_t length = utf8_sequence_length(text, pos);
    if (length == 0) {
      return "is not valid UTF-8 (at byte " + std::to_string(pos) + ")";
    }
    pos += length;
  }
  return std::nullopt;
}

std::string display_text(std::string_view text) {
  const std::string escaped = escape(text, "\t", true, true);
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

std::string body_preview(const std::string& body) {
  std::string out;
  for (std::size_t i = 0; i < body.size() && i < k_body_preview_limit; ++i) {
    auto c = static_cast<unsigned char>(body[i]);
    out += (c < 0x20 || c >= 0x7f) ? '.' : static_cast<char>(c);
  }
  if (body.size() > k_body_preview_limit) {
    out += "... (" + std::to_string(body.size()) + " bytes)";
  }
  return out;
}

std::string scrub_secrets(std::string text, std::vector<std::string> secrets) {
  secrets.erase(std::remove(secrets.begin(), secrets.end(), std::string()), secrets.end());
  std::sort(secrets.begin(), secrets.end(), [](const std::string& a, const std::string& b) {
    return a.size() > b.size();
  });
  const std::string marker = k_scrubbed_marker;
  for (const std::string& secret : secrets) {
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + marker.size())) {
      text.replace(at, secret.size(), marker);
    }
  }
  return text;
}

} // namespace lume_unlock::util

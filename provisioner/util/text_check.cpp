#include "text_check.hpp"

#include <cstdint>
#include <cstdio>

namespace lume_unlock::util {

namespace {

bool is_forbidden_control(std::uint8_t byte) {
  return (byte < 0x20 && byte != '\t') || byte == 0x7F;
}

std::string hex_byte(std::uint8_t byte) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "%02x", byte);
  return buffer;
}

} // namespace

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

std::string quote_for_message(std::string_view text) {
  std::string out = "'";
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto byte = static_cast<std::uint8_t>(text[pos]);
    if (byte == '\t') {
      out += "\\t";
      ++pos;
      continue;
    }
    if (is_forbidden_control(byte)) {
      out += "\\x" + hex_byte(byte);
      ++pos;
      continue;
    }
    const std::size_t length = utf8_sequence_length(text, pos);
    if (length == 0) {
      out += "\\x" + hex_byte(byte);
      ++pos;
      continue;
    }
    out.append(text.substr(pos, length));
    pos += length;
  }
  out += "'";
  return out;
}

std::optional<std::string> text_problem(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto byte = static_cast<std::uint8_t>(text[pos]);
    if (is_forbidden_control(byte)) {
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

} // namespace lume_unlock::util

#pragma once

// The string helpers every folder needs, written once.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::util {

inline constexpr std::string_view k_whitespace = " \t\r\n";

/// `text` without the leading and trailing characters that are in `chars`.
std::string trim(std::string_view text, std::string_view chars = k_whitespace);

inline bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

inline bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

/// The items in order, each as `text_of(item)`, with `separator` between them:
/// join(tests, ", ", [](const auto& t) { return t.name(); }) is "pp512, tg128".
template <class Items, class TextOf>
std::string join(const Items& items, std::string_view separator, TextOf text_of) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) {
      out += separator;
    }
    out += text_of(item);
    first = false;
  }
  return out;
}

/// join({"a", "b"}, ", ") is "a, b".
template <class Strings>
std::string join(const Strings& parts, std::string_view separator) {
  return join(
      parts, separator, [](const auto& part) -> const auto& { return part; });
}

/// A decimal without sign or spaces that fits in 64 bits; nullopt for anything else.
std::optional<std::uint64_t> parse_decimal(std::string_view text);

/// What follows the last '/' of `path` ("a/b.txt" -> "b.txt", "b.txt" -> "b.txt", "a/" -> "").
std::string base_name(std::string_view path);

/// `count` and the noun, plural unless count is 1: "1 file", "3 files", "2 entries" (with
/// `plural_noun` "entries"; empty: noun + "s").
std::string plural(std::size_t count, std::string_view noun, std::string_view plural_noun = {});

/// Levenshtein distance between two strings (bytes).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `input`, if it is close enough to be a plausible typo
/// (distance at most max(1, input.size() / 3)) — for "did you mean ..." hints.
std::optional<std::string> closest_match(std::string_view input,
                                         const std::vector<std::string>& candidates);

/// The hint for an unknown key: "did you mean 'shim'? (known keys here: inject_env, shim)", or
/// only the parenthesised list when no key is close.
std::string unknown_key_hint(std::string_view input, const std::vector<std::string>& known);

/// `digits` lower-case hex digits from std::random_device: names that two concurrent runs never
/// share (scratch directories, run ids). Not for secrets.
std::string random_hex(std::size_t digits);

} // namespace lume_unlock::util

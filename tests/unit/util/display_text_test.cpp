#include "util/text_check.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lume_unlock::util {
namespace {

TEST(DisplayText, KeepsPrintableTextUtf8NewlineAndTab) {
  EXPECT_EQ(display_text("pull of 'ghcr.io/a/b:1'"), "pull of 'ghcr.io/a/b:1'");
  EXPECT_EQ(display_text("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\xa6\x99"),
            "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\xa6\x99");
  EXPECT_EQ(display_text("line one\n\tline two"), "line one\n\tline two");
  EXPECT_EQ(display_text(""), "");
}

TEST(DisplayText, EscapesEveryControlAndInvalidByte) {
  struct Case {
    std::string input;
    std::string shown;
  };
  const Case cases[] = {
      {"vm\x1b]0;pwned\x07", "vm\\x1b]0;pwned\\x07"}, // OSC: retitles the terminal
      {"\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"}, // CSI: recolours it
      {"a\rb", "a\\x0db"},
      {"del\x7f", "del\\x7f"},
      {std::string("nul\0x", 5), "nul\\x00x"},
      {"c1 \xc2\x9b"
       "31m",
       "c1 \\xc2\\x9b31m"},               // C1 CSI in UTF-8
      {"c1 \xc2\x85", "c1 \\xc2\\x85"},   // NEL
      {"nbsp \xc2\xa0", "nbsp \xc2\xa0"}, // U+00A0 is printable
      {"bad \xff\xc3", "bad \\xff\\xc3"},
      {"overlong \xc0\xaf", "overlong \\xc0\\xaf"},
      {"surrogate \xed\xa0\x80", "surrogate \\xed\\xa0\\x80"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(display_text(c.input), c.shown) << c.shown;
  }
}

TEST(DisplayText, CutsALongWordWithItsSize) {
  const std::string reference = "registry.example/" + std::string(120 * 1024, 'a') + ":1";
  const std::string shown = display_text("reference '" + reference + "' is too long");
  EXPECT_EQ(shown,
            "reference '" + reference.substr(0, 255) + "… (" +
                std::to_string(reference.size() + 2) + " bytes) is too long");
}

TEST(DisplayText, KeepsWordsUpToTheLimit) {
  const std::string word(k_display_word_limit, 'w');
  EXPECT_EQ(display_text(word + " " + word), word + " " + word);
  const std::string longer(k_display_word_limit + 1, 'w');
  EXPECT_EQ(display_text(longer), std::string(k_display_word_kept, 'w') + "… (321 bytes)");
}

TEST(DisplayText, CutsALongTextOfShortWords) {
  std::string text;
  for (int i = 0; i < 5000; ++i) {
    text += "word ";
  }
  const std::string shown = display_text(text);
  EXPECT_EQ(shown, text.substr(0, k_display_text_kept) + "… (25000 bytes)");
}

TEST(DisplayText, IsIdempotent) {
  const std::string inputs[] = {
      "vm\x1b]0;pwned\x07 \xc2\x9b \xff",
      std::string(100000, 'x'),
      std::string(30000, ' ') + "x",
  };
  for (const auto& input : inputs) {
    const std::string once = display_text(input);
    EXPECT_EQ(display_text(once), once);
  }
}

TEST(DisplayText, CutsACharacterNotAByte) {
  std::string word;
  for (int i = 0; i < 400; ++i) {
    word += "\xc3\xa9";
  }
  std::string kept;
  for (std::size_t i = 0; i < k_display_word_kept; ++i) {
    kept += "\xc3\xa9";
  }
  EXPECT_EQ(display_text(word), kept + "… (800 bytes)");
}

} // namespace
} // namespace lume_unlock::util

#include "llama_log_reader.hpp"

#include <algorithm>
#include <cctype>

namespace lume_unlock::verify {

namespace {

std::string trim(std::string_view text) {
  auto begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) {
    return {};
  }
  auto end = text.find_last_not_of(" \t");
  return std::string(text.substr(begin, end - begin + 1));
}

// Character classes as ECMAScript regex names them; the classifier scans each line once, left to
// right, so no input length can make it recurse or backtrack (std::regex overflowed the stack).
bool is_word(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/// The index just past the run of characters satisfying `accept` that starts at `at`.
template <typename Accept>
std::size_t skip(std::string_view text, std::size_t at, Accept accept) {
  while (at < text.size() && accept(text[at])) {
    ++at;
  }
  return at;
}

std::string_view trim_spaces_right(std::string_view text) {
  while (!text.empty() && is_space(text.back())) {
    text.remove_suffix(1);
  }
  return text;
}

/// "simdgroup   matrix mul.  support" -> "simdgroup matrix mul.": labels keyed on words, not
/// columns.
std::string canonical_label(std::string_view label) {
  std::string words;
  bool space = false;
  for (char c : label) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !words.empty();
      continue;
    }
    if (space) {
      words += ' ';
      space = false;
    }
    words += c;
  }
  const std::string suffix = " support";
  if (words.size() > suffix.size() &&
      words.compare(words.size() - suffix.size(), suffix.size(), suffix) == 0) {
    words.resize(words.size() - suffix.size());
  }
  return words;
}

bool starts_with_word(std::string_view text, std::string_view word) {
  if (text.size() < word.size()) {
    return false;
  }
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) !=
        std::tolower(static_cast<unsigned char>(word[i]))) {
      return false;
    }
  }
  return true;
}

std::optional<long long> parse_number(const std::string& text) {
  try {
    std::size_t used = 0;
    long long value = std::stoll(text, &used, 0); // decimal or 0x-hex, as the shim accepts
    return used == text.size() ? std::optional<long long>(value) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt; // out of range or not a number: the value is unknown
  }
}

/// "llama-bench (appleFamilyMax=1009 maxThreadgroupMemory=65536)" after "enabled for ".
ShimActivation parse_activation(ShimKind kind, const std::string& rest) {
  ShimActivation activation;
  activation.kind = kind;
  auto paren = rest.rfind('(');
  activation.process = trim(rest.substr(0, paren == std::string::npos ? rest.size() : paren));
  const std::string_view params =
      paren == std::string::npos ? std::string_view() : std::string_view(rest).substr(paren);
  // Each "key = value" pair: a word, optional spaces, '=', optional spaces, a number.
  std::size_t at = 0;
  while (at < params.size()) {
    if (!is_word(params[at])) {
      ++at;
      continue;
    }
    const std::size_t key_end = skip(params, at, is_word);
    std::size_t cursor = skip(params, key_end, is_space);
    if (cursor == params.size() || params[cursor] != '=') {
      at = key_end;
      continue;
    }
    cursor = skip(params, cursor + 1, is_space);
    const std::size_t value_end = skip(params, cursor, [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c)) || c == 'x';
    });
    if (value_end == cursor) {
      at = key_end;
      continue;
    }
    const std::string key(params.substr(at, key_end - at));
    auto value = parse_number(std::string(params.substr(cursor, value_end - cursor)));
    if (key == "appleFamilyMax") {
      activation.apple_family_max = value;
    } else if (key == "familyMax") {
      activation.family_max = value;
    } else if (key == "featureProfile") {
      activation.feature_profile = value;
    } else if (key == "maxThreadgroupMemory") {
      activation.max_threadgroup_memory = value;
    }
    at = value_end;
  }
  if (kind == ShimKind::cua && (activation.family_max || activation.feature_profile)) {
    activation.kind = ShimKind::cua_broad;
  }
  return activation;
}

/// Reads the log line by line into `report`, remembering whether any Metal init line was seen.
class LineReader {
public:
  explicit LineReader(LlamaLogReport& report) : m_report(report) {}

  void read(std::string_view line);
  bool saw_metal_init() const { return m_saw_metal_init; }

private:
  void read_shim(std::string_view marker_line, std::size_t marker_end, ShimKind kind);
  void read_metal(const std::string& body);
  void read_family(const std::string& body);
  void read_flag(const std::string& label, bool value);

  LlamaLogReport& m_report;
  bool m_saw_metal_init = false;
  bool m_bfloat_from_has = false;
};

void LineReader::read(std::string_view line) {
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  for (auto [marker, kind] :
       {std::pair<std::string_view, ShimKind>{"[lume-unlock-shim]", ShimKind::lume_unlock},
        std::pair<std::string_view, ShimKind>{"[LumeMetalCapabilities]", ShimKind::cua}}) {
    auto at = line.find(marker);
    if (at != std::string_view::npos) {
      read_shim(line, at + marker.size(), kind);
      return;
    }
  }
  // "ggml_metal<word chars>: <body>", at the first "ggml_metal" that has that form.
  const std::string_view prefix = "ggml_metal";
  for (auto at = line.find(prefix); at != std::string_view::npos; at = line.find(prefix, at + 1)) {
    std::size_t cursor = skip(line, at + prefix.size(), is_word);
    if (cursor == line.size() || line[cursor] != ':') {
      continue;
    }
    cursor = skip(line, cursor + 1, is_space);
    const std::string_view body = line.substr(cursor);
    if (body.find('\r') != std::string_view::npos) {
      continue; // a carriage return inside the line ends it: nothing reaches the end
    }
    read_metal(std::string(body));
    return;
  }
}

void LineReader::read_shim(std::string_view line, std::size_t marker_end, ShimKind kind) {
  auto rest = trim(line.substr(marker_end));
  const std::string_view enabled = "enabled for ";
  if (starts_with_word(rest, enabled)) {
    if (!m_report.shim) { // the first activation is the one that shaped the device
      m_report.shim = parse_activation(kind, rest.substr(enabled.size()));
    }
    return;
  }
  m_report.inert_messages.push_back(rest);
}

/// "MTL0 (Apple M1 Ultra)" -> "Apple M1 Ultra"; a bare "MTL0" -> ""; any other text as it is.
std::string device_name(const std::string& value) {
  const std::string_view text = value;
  if (text.rfind("MTL", 0) != 0) {
    return value;
  }
  const std::size_t digits_end = skip(text, 3, is_digit);
  if (digits_end == 3) {
    return value;
  }
  const std::string_view rest = text.substr(skip(text, digits_end, is_space));
  if (rest.empty()) {
    return {};
  }
  if (rest.size() >= 2 && rest.front() == '(' && rest.back() == ')' &&
      rest.find('\r') == std::string_view::npos) {
    return trim(rest.substr(1, rest.size() - 2));
  }
  return value;
}

/// "<label> = true|false", the label a letter then letters, spaces and dots.
std::optional<std::pair<std::string, bool>> parse_flag(std::string_view body) {
  const auto equals = body.find('=');
  if (equals == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view label = trim_spaces_right(body.substr(0, equals));
  if (label.empty() || !std::isalpha(static_cast<unsigned char>(label.front())) ||
      label.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz .") !=
          std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view value = body.substr(skip(body, equals + 1, is_space));
  value = trim_spaces_right(value);
  if (value != "true" && value != "false") {
    return std::nullopt;
  }
  return std::make_pair(std::string(label), value == "true");
}

void LineReader::read_metal(const std::string& body) {
  if (body.rfind("GPU name:", 0) == 0) {
    m_saw_metal_init = true;
    const std::string name = device_name(trim(body.substr(9)));
    if (!m_report.gpu_name && !name.empty()) {
      m_report.gpu_name = name;
    }
    return;
  }
  if (body.rfind("GPU family:", 0) == 0) {
    m_saw_metal_init = true;
    read_family(body);
    return;
  }
  if (auto flag = parse_flag(body)) {
    read_flag(canonical_label(flag->first), flag->second);
  }
}

/// Up to six digits at `at`; the end of the run, or `at` when there is none.
std::size_t skip_digits_up_to_six(std::string_view text, std::size_t at) {
  std::size_t end = at;
  while (end < text.size() && end - at < 6 && is_digit(text[end])) {
    ++end;
  }
  return end;
}

void LineReader::read_family(const std::string& body) {
  // "MTLGPUFamily<Apple|Common|Metal><1-6 digits>", then optionally "(<1-6 digits>)".
  const std::string_view text = body;
  const std::string_view prefix = "MTLGPUFamily";
  std::string kind;
  int number = 0;
  std::size_t cursor = 0;
  for (auto at = text.find(prefix); at != std::string_view::npos; at = text.find(prefix, at + 1)) {
    const std::string_view rest = text.substr(at + prefix.size());
    for (const char* candidate : {"Apple", "Common", "Metal"}) {
      if (rest.rfind(candidate, 0) == 0) {
        kind = candidate;
      }
    }
    if (kind.empty()) {
      continue;
    }
    const std::size_t digits = at + prefix.size() + kind.size();
    cursor = skip_digits_up_to_six(text, digits);
    if (cursor == digits) {
      kind.clear();
      continue;
    }
    number = std::stoi(std::string(text.substr(digits, cursor - digits)));
    break;
  }
  if (kind.empty()) {
    return;
  }
  // The code in parentheses is authoritative; older lines may lack it.
  std::optional<int> explicit_code;
  std::size_t open = skip(text, cursor, is_space);
  if (open < text.size() && text[open] == '(') {
    const std::size_t digits = skip(text, open + 1, is_space);
    const std::size_t digits_end = skip_digits_up_to_six(text, digits);
    const std::size_t close = skip(text, digits_end, is_space);
    if (digits_end > digits && close < text.size() && text[close] == ')') {
      explicit_code = std::stoi(std::string(text.substr(digits, digits_end - digits)));
    }
  }
  int code = 0;
  if (explicit_code) {
    code = *explicit_code;
  } else if (kind == "Apple") {
    code = 1000 + number;
  } else if (kind == "Common") {
    code = 3000 + number;
  } else {
    code = k_metal3 + number - 3; // MTLGPUFamilyMetal3 is 5001
  }
  auto& field = kind == "Apple"
                    ? m_report.apple_family
                    : (kind == "Common" ? m_report.common_family : m_report.metal_family);
  if (!field) {
    field = code;
  }
}

void LineReader::read_flag(const std::string& label, bool value) {
  auto set = [value](std::optional<bool>& field) {
    if (!field) {
      field = value;
    }
  };
  if (label == "simdgroup reduction") {
    m_saw_metal_init = true;
    set(m_report.simdgroup_reduction);
  } else if (label == "simdgroup matrix mul.") {
    m_saw_metal_init = true;
    set(m_report.simdgroup_matrix);
  } else if (label == "has bfloat") {
    // The capability; "use bfloat" (2024-11 to 2025-09) is only a fallback.
    if (!m_bfloat_from_has) {
      m_report.bfloat = value;
      m_bfloat_from_has = true;
    }
  } else if (label == "use bfloat" || label == "bfloat") {
    set(m_report.bfloat);
  } else if (label == "has tensor") {
    set(m_report.tensor);
  } else if (label == "use residency sets" || label == "has residency sets") {
    set(m_report.residency_sets);
  }
}

} // namespace

bool read_llama_log(std::string_view text, LlamaLogReport& report) {
  LineReader reader(report);
  while (!text.empty()) {
    auto newline = text.find('\n');
    reader.read(text.substr(0, newline));
    if (newline == std::string_view::npos) {
      break;
    }
    text.remove_prefix(newline + 1);
  }
  return reader.saw_metal_init();
}

} // namespace lume_unlock::verify

#include "util/text.hpp"
#include "verify/llama_log_parts.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace lume_unlock::verify {

namespace {

using util::trim;

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

constexpr std::string_view k_spaces = " \t\n\v\f\r";

/// `line` without llama.cpp's common-logger prefix (tools that call common_init(), on by default
/// since PR #23021): "M.SS.mmm.uuu " and the level's letter and a space ("0.01.234.567 E …").
std::string_view without_common_log_prefix(std::string_view line) {
  std::size_t at = skip(line, 0, is_digit);
  for (const std::size_t width : {2, 3, 3}) {
    if (at == 0 || at >= line.size() || line[at] != '.' ||
        skip(line, at + 1, is_digit) != at + 1 + width) {
      return line;
    }
    at += 1 + width;
  }
  const bool level = line.size() >= at + 3 && line[at] == ' ' &&
                     std::string_view("IWED").find(line[at + 1]) != std::string_view::npos &&
                     line[at + 2] == ' ';
  return level ? line.substr(at + 3) : line;
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
  const std::string_view suffix = " support";
  if (words.size() > suffix.size() && util::ends_with(words, suffix)) {
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

/// The capability fields of one block; a field seen twice means the block is another run's.
enum CapabilityField : unsigned {
  k_field_name = 1u << 0,
  k_field_apple = 1u << 1,
  k_field_common = 1u << 2,
  k_field_metal = 1u << 3,
  k_field_reduction = 1u << 4,
  k_field_matrix = 1u << 5,
};

/// Reads the log line by line into `report`, remembering whether any Metal init line was seen.
/// A shim line, a capability field seen twice, or a library failure after a block starts a new
/// run: `report` is then emptied, so it ends holding the last run only.
class LineReader {
public:
  explicit LineReader(LlamaLogReport& report) : m_report(report) {}

  void read(std::string_view line);
  bool saw_metal_init() const { return m_saw_metal_init; }

private:
  /// A new run from this line; `keep_failures` when it may be the same process (per note_field).
  void start_run(bool keep_failures = false);
  void mark_content();
  void note_field(unsigned field);
  void
  read_shim(std::string_view line, std::size_t marker_at, std::size_t marker_end, ShimKind kind);
  void read_failure(std::string_view line,
                    std::string_view function,
                    std::string_view body,
                    MetalFailureKind kind);
  void read_metal(const std::string& body);
  void read_family(const std::string& body);
  void read_flag(const std::string& label, bool value);

  LlamaLogReport& m_report;
  std::size_t m_line = 0;
  bool m_saw_metal_init = false;
  bool m_bfloat_from_has = false;
  bool m_run_has_content = false;
  bool m_run_has_library_failure = false;
  bool m_detail_pending = false; ///< the last line was a command-buffer failure
  unsigned m_fields_seen = 0;
};

void LineReader::start_run(bool keep_failures) {
  LlamaLogReport next;
  next.run.first_line = m_line;
  next.run.earlier_runs = m_report.run.earlier_runs + 1;
  if (keep_failures) {
    next.failures = std::move(m_report.failures);
    next.failure_count = m_report.failure_count;
  }
  m_report = std::move(next);
  m_saw_metal_init = false;
  m_bfloat_from_has = false;
  m_run_has_content = false;
  m_run_has_library_failure = false;
  m_detail_pending = false;
  m_fields_seen = 0;
}

/// The run holds a line that counts; the first such line starts the file's first run.
void LineReader::mark_content() {
  if (!m_run_has_content && m_report.run.earlier_runs == 0) {
    m_report.run.first_line = m_line;
  }
  m_run_has_content = true;
}

void LineReader::note_field(unsigned field) {
  if ((m_fields_seen & field) != 0) {
    // The same field again: a restart, or (before ggml's Metal refactor) another context of the
    // same process, so its failures still count. Only a shim line marks a restart for sure.
    start_run(/*keep_failures=*/true);
  }
  m_fields_seen |= field;
  mark_content();
  m_saw_metal_init = true;
}

void LineReader::read(std::string_view line) {
  ++m_line;
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  line = without_common_log_prefix(line);
  const bool detail_pending = std::exchange(m_detail_pending, false);
  if (detail_pending && util::starts_with(line, "error: ")) {
    m_report.failures.back().detail = trim(line); // what Metal said of the failed command buffer
    return;
  }
  for (auto [marker, kind] :
       {std::pair<std::string_view, ShimKind>{"[lume-unlock-shim]", ShimKind::lume_unlock},
        std::pair<std::string_view, ShimKind>{"[LumeMetalCapabilities]", ShimKind::cua}}) {
    auto at = line.find(marker);
    if (at != std::string_view::npos) {
      read_shim(line, at, at + marker.size(), kind);
      return;
    }
  }
  if (auto kind = metal_abort_kind(line)) {
    read_failure(line, "ggml_abort", line, *kind);
    return;
  }
  // "ggml_metal<word chars>: <body>", at the first "ggml_metal" that has that form. Builds before
  // ggml's 2025-09 Metal refactor also wrote failures from "ggml_backend_metal<word chars>".
  for (auto at = line.find("ggml_"); at != std::string_view::npos;
       at = line.find("ggml_", at + 1)) {
    const std::string_view rest = line.substr(at);
    const bool older_backend = util::starts_with(rest, "ggml_backend_metal");
    if (!older_backend && !util::starts_with(rest, "ggml_metal")) {
      continue;
    }
    const std::size_t function_end = skip(line, at + 5, is_word);
    if (function_end == line.size() || line[function_end] != ':') {
      continue;
    }
    const std::string_view body = line.substr(skip(line, function_end + 1, is_space));
    if (body.find('\r') != std::string_view::npos) {
      continue; // a carriage return inside the line ends it: nothing reaches the end
    }
    const std::string_view function = line.substr(at, function_end - at);
    if (auto kind = metal_failure_kind(function, body)) {
      read_failure(line, function, body, *kind);
      return;
    }
    if (older_backend) {
      return; // buffers and sizes, no capability
    }
    read_metal(std::string(body));
    return;
  }
}

void LineReader::read_shim(std::string_view line,
                           std::size_t marker_at,
                           std::size_t marker_end,
                           ShimKind kind) {
  if (m_run_has_content) {
    start_run(); // a shim line is the first a process writes: a restart
  }
  mark_content();
  auto rest = trim(line.substr(marker_end));
  const std::string_view enabled = "enabled for ";
  if (starts_with_word(rest, enabled)) {
    if (!m_report.shim) {
      m_report.shim = parse_activation(kind, rest.substr(enabled.size()));
      m_report.shim->line = m_line;
      m_report.run.process = m_report.shim->process;
    }
    return;
  }
  if (auto failure = read_shim_failure(kind, line.substr(0, marker_at), rest)) {
    failure->line = m_line;
    failure->text = trim(line);
    if (!failure->process.empty()) {
      m_report.run.process = failure->process;
    }
    if (!m_report.shim_failure) {
      m_report.shim_failure = std::move(failure);
    }
    return;
  }
  m_report.inert_messages.push_back(rest);
}

void LineReader::read_failure(std::string_view line,
                              std::string_view function,
                              std::string_view body,
                              MetalFailureKind kind) {
  if (is_init_failure(function, body, kind) && m_saw_metal_init && !m_run_has_library_failure) {
    start_run(); // a process that restarted without a shim line, failing before its block
  }
  mark_content();
  m_run_has_library_failure = m_run_has_library_failure || kind == MetalFailureKind::library;
  ++m_report.failure_count;
  if (m_report.failures.size() < k_max_failures_kept) {
    m_report.failures.push_back(MetalFailure{kind, m_line, trim(line), std::nullopt});
    m_detail_pending = kind == MetalFailureKind::command_buffer;
  }
}

/// "MTL0 (Apple M1 Ultra)" -> "Apple M1 Ultra"; a bare "MTL0" -> ""; any other text as it is.
std::string device_name(const std::string& value) {
  const std::string_view text = value;
  if (!util::starts_with(text, "MTL")) {
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
  const std::string label = trim(body.substr(0, equals), k_spaces);
  if (label.empty() || !std::isalpha(static_cast<unsigned char>(label.front())) ||
      label.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz .") !=
          std::string::npos) {
    return std::nullopt;
  }
  const std::string value = trim(body.substr(equals + 1), k_spaces);
  if (value != "true" && value != "false") {
    return std::nullopt;
  }
  return std::make_pair(label, value == "true");
}

void LineReader::read_metal(const std::string& body) {
  if (util::starts_with(body, "GPU name:")) {
    note_field(k_field_name);
    const std::string name = device_name(trim(body.substr(9)));
    if (!m_report.gpu_name && !name.empty()) {
      m_report.gpu_name = name;
    }
    return;
  }
  if (util::starts_with(body, "GPU family:")) {
    m_saw_metal_init = true;
    mark_content();
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
      if (util::starts_with(rest, candidate)) {
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
  note_field(kind == "Apple" ? k_field_apple : (kind == "Common" ? k_field_common : k_field_metal));
  auto& field = kind == "Apple"
                    ? m_report.apple_family
                    : (kind == "Common" ? m_report.common_family : m_report.metal_family);
  field = code;
}

void LineReader::read_flag(const std::string& label, bool value) {
  auto set = [value](std::optional<bool>& field) {
    if (!field) {
      field = value;
    }
  };
  if (label == "simdgroup reduction") {
    note_field(k_field_reduction);
    set(m_report.simdgroup_reduction);
  } else if (label == "simdgroup matrix mul.") {
    note_field(k_field_matrix);
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

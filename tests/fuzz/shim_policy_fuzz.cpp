// libFuzzer target for the shim policy's parsers: numbers, the whole activation decision, and
// the guard file. The first byte picks the parser; every invariant failure traps.
#include "policy/policy.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace lume_unlock::policy;

void check(bool condition) {
  if (!condition)
    __builtin_trap();
}

std::vector<std::string_view> split(std::string_view data, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= data.size(); ++i) {
    if (i == data.size() || data[i] == separator) {
      parts.push_back(data.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

void fuzz_number(std::string_view text) {
  const ParsedNumber parsed = parse_unsigned(text);
  if (!parsed.ok())
    return;
  check(!text.empty());
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  if (!hex) {
    // A decimal that parsed is digits only, and printing it back parses to the same value.
    for (char c : text)
      check(c >= '0' && c <= '9');
    const std::string printed = std::to_string(parsed.value);
    const ParsedNumber again = parse_unsigned(printed);
    check(again.ok() && again.value == parsed.value);
  }
}

// Naive reference for guard_lists: the same rules written the slow, obvious way.
bool reference_lists(std::string_view text, std::string_view exe) {
  if (exe.empty() || exe[0] != '/')
    return false;
  for (std::string_view line : split(text, '\n')) {
    std::string entry(line);
    while (!entry.empty() && (entry.back() == ' ' || entry.back() == '\t' || entry.back() == '\r'))
      entry.pop_back();
    std::size_t first = 0;
    while (first < entry.size() &&
           (entry[first] == ' ' || entry[first] == '\t' || entry[first] == '\r'))
      ++first;
    entry.erase(0, first);
    if (!entry.empty() && entry[0] == '/' && entry == exe)
      return true;
  }
  return false;
}

void fuzz_guard(std::string_view data) {
  const std::size_t cut = data.find('\0');
  const std::string_view exe =
      cut == std::string_view::npos ? std::string_view() : data.substr(0, cut);
  const std::string_view text = cut == std::string_view::npos ? data : data.substr(cut + 1);
  check(guard_lists(text, exe) == reference_lists(text, exe));
}

void fuzz_decision(std::string_view data) {
  // Fields separated by NUL: ceiling, threadgroup, working set, enablement, disable, guard, exe.
  // A field that is exactly "\x01" is unset.
  const std::vector<std::string_view> f = split(data, '\0');
  auto field = [&](std::size_t i) -> std::optional<std::string_view> {
    if (i >= f.size() || f[i] == "\x01")
      return std::nullopt;
    return f[i];
  };
  ActivationInput in;
  in.env.apple_family_max = field(0);
  in.env.max_threadgroup_memory = field(1);
  in.env.recommended_working_set = field(2);
  in.env.enablement = field(3);
  in.env.disable = field(4);
  in.guard_text = field(5);
  in.executable_path = field(6);
  const ConfigResult result = decide(in);
  if (in.env.disable == std::optional<std::string_view>("1"))
    check(result.reason == Reason::disabled);
  if (result.reason == Reason::active) {
    check(result.profile.apple_family_max >= 1001 && result.profile.apple_family_max <= 1999);
    check(in.env.apple_family_max.has_value());
    if (in.env.enablement.has_value()) {
      check(in.guard_text.has_value() && in.executable_path.has_value());
      check(guard_lists(*in.guard_text, *in.executable_path));
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
  case 0:
    fuzz_number(rest);
    break;
  case 1:
    fuzz_guard(rest);
    break;
  default:
    fuzz_decision(rest);
    break;
  }
  return 0;
}

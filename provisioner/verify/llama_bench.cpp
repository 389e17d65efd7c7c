#include "verify/llama_bench.hpp"

#include "util/json_parse.hpp"
#include "util/size.hpp"
#include "util/text_check.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>

namespace lume_unlock::verify {

namespace {

using nlohmann::json;

const char* const k_hint =
    "run llama-bench with '-o json' and check that it finished (a killed or crashed run "
    "leaves a partial document)";

Error malformed(const std::string& source, const std::string& why) {
  return Error(ErrorCategory::verification, "reading llama-bench JSON from " + source, why, k_hint);
}

std::string element(std::size_t index) {
  return "test " + std::to_string(index + 1);
}

/// A whole non-negative number; llama-bench writes these as JSON integers.
Result<long long> count_field(const json& test,
                              const char* key,
                              bool required,
                              std::size_t index,
                              const std::string& source) {
  const auto found = test.find(key);
  if (found == test.end()) {
    if (!required) {
      return 0LL;
    }
    return malformed(source, element(index) + " has no \"" + key + "\"");
  }
  if (!found->is_number_integer()) {
    return malformed(source,
                     element(index) + "'s \"" + key + "\" is " + found->type_name() +
                         ", not a whole number");
  }
  constexpr long long k_limit = 1LL << 40;
  const bool too_big = found->is_number_unsigned() &&
                       found->get<unsigned long long>() > static_cast<unsigned long long>(k_limit);
  const long long value = too_big ? k_limit + 1 : found->get<long long>();
  if (value < 0 || value > k_limit) {
    return malformed(
        source, element(index) + "'s \"" + key + "\" is " + found->dump() + ", outside 0..2^40");
  }
  return value;
}

Result<double>
rate_field(const json& test, const char* key, std::size_t index, const std::string& source) {
  const auto found = test.find(key);
  if (found == test.end()) {
    return malformed(source, element(index) + " has no \"" + key + "\"");
  }
  if (!found->is_number()) {
    return malformed(
        source, element(index) + "'s \"" + key + "\" is " + found->type_name() + ", not a number");
  }
  const double value = found->get<double>();
  if (!std::isfinite(value) || value < 0) {
    return malformed(source,
                     element(index) + "'s \"" + key + "\" is " + found->dump() +
                         ", not a finite figure of at least 0");
  }
  return value;
}

/// samples_ts: optional (older llama-bench prints none), but when present every element must
/// be a figure rate_field would accept, or the medians read from it would be wrong.
Result<std::vector<double>>
samples_field(const json& test, const char* key, std::size_t index, const std::string& source) {
  std::vector<double> out;
  const auto found = test.find(key);
  if (found == test.end() || found->is_null()) {
    return out;
  }
  if (!found->is_array()) {
    return malformed(
        source, element(index) + "'s \"" + key + "\" is " + found->type_name() + ", not an array");
  }
  for (std::size_t i = 0; i < found->size(); ++i) {
    const json& sample = (*found)[i];
    if (!sample.is_number() || !std::isfinite(sample.get<double>()) || sample.get<double>() < 0) {
      return malformed(source,
                       element(index) + "'s \"" + key + "\" element " + std::to_string(i + 1) +
                           " is " + sample.dump() + ", not a finite figure of at least 0");
    }
    out.push_back(sample.get<double>());
  }
  return out;
}

Result<std::optional<std::string>>
text_field(const json& test, const char* key, std::size_t index, const std::string& source) {
  const auto found = test.find(key);
  if (found == test.end() || found->is_null()) {
    return std::optional<std::string>();
  }
  if (!found->is_string()) {
    return malformed(
        source, element(index) + "'s \"" + key + "\" is " + found->type_name() + ", not a string");
  }
  return std::optional<std::string>(found->get<std::string>());
}

Result<LlamaBenchTest> read_test(const json& item, std::size_t index, const std::string& source) {
  if (!item.is_object()) {
    return malformed(source,
                     element(index) + " is " + std::string(item.type_name()) + ", not an object");
  }
  LlamaBenchTest test;
  LUME_UNLOCK_TRY_ASSIGN(test.n_prompt, count_field(item, "n_prompt", true, index, source));
  LUME_UNLOCK_TRY_ASSIGN(test.n_gen, count_field(item, "n_gen", true, index, source));
  LUME_UNLOCK_TRY_ASSIGN(test.n_depth, count_field(item, "n_depth", false, index, source));
  if (test.n_prompt == 0 && test.n_gen == 0) {
    return malformed(source, element(index) + " has n_prompt and n_gen 0: it measured nothing");
  }
  LUME_UNLOCK_TRY_ASSIGN(test.avg_ts, rate_field(item, "avg_ts", index, source));
  LUME_UNLOCK_TRY_ASSIGN(test.stddev_ts, rate_field(item, "stddev_ts", index, source));
  LUME_UNLOCK_TRY_ASSIGN(test.samples_ts, samples_field(item, "samples_ts", index, source));
  LUME_UNLOCK_TRY_ASSIGN(test.backends, text_field(item, "backends", index, source));
  LUME_UNLOCK_TRY_ASSIGN(test.gpu_info, text_field(item, "gpu_info", index, source));
  LUME_UNLOCK_TRY_ASSIGN(test.cpu_info, text_field(item, "cpu_info", index, source));
  LUME_UNLOCK_TRY_ASSIGN(test.model_type, text_field(item, "model_type", index, source));
  LUME_UNLOCK_TRY_ASSIGN(test.build_commit, text_field(item, "build_commit", index, source));
  return test;
}

} // namespace

std::string LlamaBenchTest::name() const {
  std::string out;
  if (n_prompt > 0) {
    out = "pp" + std::to_string(n_prompt);
  }
  if (n_gen > 0) {
    out += (out.empty() ? "tg" : "+tg") + std::to_string(n_gen);
  }
  if (n_depth > 0) {
    out += " @ d" + std::to_string(n_depth);
  }
  return out;
}

std::string LlamaBenchTest::kind() const {
  if (n_gen == 0) {
    return "pp";
  }
  return n_prompt == 0 ? "tg" : "pg";
}

Result<std::vector<LlamaBenchTest>> parse_llama_bench_json(std::string_view text,
                                                           const std::string& source) {
  if (text.size() > k_max_llama_bench_bytes) {
    return malformed(source,
                     "it is " + util::format_size(text.size()) + ", over the limit of " +
                         util::describe_limit(k_max_llama_bench_bytes));
  }
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return malformed(source, "it is empty: llama-bench printed no JSON");
  }
  util::JsonParsed parsed = util::parse_json(text);
  if (!parsed.ok()) {
    const util::JsonSyntaxError& error = *parsed.error;
    if (error.kind == util::JsonSyntaxError::Kind::out_of_range) {
      return malformed(
          source, "it is not JSON we can hold: " + util::describe_json_error(error, text.size()));
    }
    if (error.kind == util::JsonSyntaxError::Kind::truncated || error.byte >= text.size()) {
      return malformed(source,
                       "it ends early, after " + std::to_string(text.size()) +
                           " bytes: the JSON is truncated");
    }
    return malformed(
        source,
        "it is not JSON (at byte " + std::to_string(error.byte) + ": " +
            util::quote_for_message(text.substr(error.byte > 0 ? error.byte - 1 : 0, 24)) + ")");
  }
  const json document = std::move(parsed.value);
  if (!document.is_array()) {
    return malformed(source,
                     "it is a JSON " + std::string(document.type_name()) +
                         ", not the array of tests '-o json' prints (was it '-o jsonl'?)");
  }
  if (document.empty()) {
    return malformed(source, "it holds no tests");
  }
  std::vector<LlamaBenchTest> tests;
  std::set<std::string> names;
  for (std::size_t i = 0; i < document.size(); ++i) {
    LUME_UNLOCK_TRY_ASSIGN(auto test, read_test(document[i], i, source));
    if (!names.insert(test.name()).second) {
      return malformed(source,
                       element(i) + " repeats " + test.name() + " (one test per size is expected)");
    }
    tests.push_back(std::move(test));
  }
  return tests;
}

} // namespace lume_unlock::verify

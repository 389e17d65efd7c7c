#include "util/json_reader.hpp"
#include "util/size.hpp"
#include "util/text_check.hpp"
#include "verify/bench.hpp"

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

using util::JsonObject;
using util::JsonValue;

/// A whole number from 0 to 2^40; llama-bench writes these as JSON integers. Absent: 0.
long long count(const JsonObject& test, const char* key, bool required) {
  const auto found =
      required ? std::optional<JsonValue>(test.at(key, "an integer")) : test.find(key);
  if (!found) {
    return 0;
  }
  constexpr long long k_limit = 1LL << 40;
  const json& value = found->json();
  if (value.is_number_integer() &&
      (value.is_number_unsigned()
           ? value.get<std::uint64_t>() > std::uint64_t(k_limit)
           : value.get<long long>() < 0 || value.get<long long>() > k_limit)) {
    found->fail(value.dump() + " is outside 0..2^40");
  }
  return found->integer();
}

double rate(const JsonValue& figure) {
  const double value = figure.number();
  if (!std::isfinite(value) || value < 0) {
    figure.fail(figure.json().dump() + " is not a finite figure of at least 0");
  }
  return value;
}

LlamaBenchTest read_test(const JsonValue& item) {
  const JsonObject object = item.object();
  LlamaBenchTest test;
  test.n_prompt = count(object, "n_prompt", true);
  test.n_gen = count(object, "n_gen", true);
  test.n_depth = count(object, "n_depth", false);
  if (test.n_prompt == 0 && test.n_gen == 0) {
    item.fail("n_prompt and n_gen are 0: it measured nothing");
  }
  test.avg_ts = rate(object.at("avg_ts", "a number"));
  test.stddev_ts = rate(object.at("stddev_ts", "a number"));
  // Optional (older llama-bench prints none), but every sample must be a figure, or the medians
  // read from them would be wrong.
  if (const auto samples = object.find("samples_ts")) {
    for (const JsonValue& sample : samples->array()) {
      test.samples_ts.push_back(rate(sample));
    }
  }
  test.backends = object.optional_string("backends");
  test.gpu_info = object.optional_string("gpu_info");
  test.cpu_info = object.optional_string("cpu_info");
  test.model_type = object.optional_string("model_type");
  test.build_commit = object.optional_string("build_commit");
  return test;
}

std::vector<LlamaBenchTest> read_tests(const JsonValue& document) {
  if (!document.json().is_array()) {
    document.fail("expected the array of tests '-o json' prints (was it '-o jsonl'?), got " +
                  util::json_type_name(document.json()));
  }
  if (document.json().empty()) {
    document.fail("it holds no tests");
  }
  std::vector<LlamaBenchTest> tests;
  std::set<std::string> names;
  for (const JsonValue& item : document.array()) {
    tests.push_back(read_test(item));
    if (!names.insert(tests.back().name()).second) {
      item.fail("repeats " + tests.back().name() + " (one test per size is expected)");
    }
  }
  return tests;
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
  return util::read_json(
      parsed.value,
      {ErrorCategory::verification, "reading llama-bench JSON from " + source, k_hint},
      read_tests);
}

} // namespace lume_unlock::verify

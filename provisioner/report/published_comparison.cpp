#include "report/published_comparison.hpp"

#include "verify/published_run.hpp"

namespace lume_unlock::report {

namespace {

constexpr const char* k_avg_statistic = "ratio of avg_ts";

const nlohmann::json& member(const nlohmann::json& object, const char* key) {
  static const nlohmann::json null;
  return object.is_object() && object.contains(key) ? object[key] : null;
}

std::optional<double> number(const nlohmann::json& object, const char* key) {
  const auto& value = member(object, key);
  return value.is_number() ? std::optional<double>(value.get<double>()) : std::nullopt;
}

std::optional<int> whole(const nlohmann::json& object, const char* key) {
  const auto& value = member(object, key);
  return value.is_number_integer() ? std::optional<int>(value.get<int>()) : std::nullopt;
}

/// The request the record's arguments describe, to render the command the bench ran.
verify::BenchRequest recorded_request(const nlohmann::json& bench) {
  verify::BenchRequest request;
  const auto& args = member(bench, "arguments");
  request.prompt = whole(args, "prompt").value_or(request.prompt);
  request.gen = whole(args, "gen").value_or(request.gen);
  request.repetitions = whole(args, "repetitions").value_or(request.repetitions);
  request.threads = whole(args, "threads");
  request.gpu_layers = whole(args, "gpu_layers");
  return request;
}

/// Why a figure was not measured, in the words of the row's verdict.
std::string unmeasured(const char* figure, bool median) {
  if (std::string(figure) == "host_ratio" && median) {
    return "not measured: no host run with samples_ts (bench.host_json or --host-json)";
  }
  if (std::string(figure) == "host_ratio") {
    return "not measured: no host run (bench.host_json or --host-json)";
  }
  return "not measured: the llama-bench output has no samples_ts";
}

} // namespace

std::string published_verdict(double measured, double published) {
  if (measured < published * (1 - k_reproduce_tolerance)) {
    return "below the published figure";
  }
  if (measured > published * (1 + k_reproduce_tolerance)) {
    return "above the published figure";
  }
  return "reproduces";
}

nlohmann::json compare_with_published(const nlohmann::json& bench) {
  const auto& published = member(bench, "published");
  if (!published.is_object()) {
    return nullptr;
  }
  const std::string command = member(published, "command").is_string()
                                  ? published["command"].get<std::string>()
                                  : std::string();
  const verify::BenchRequest request = recorded_request(bench);
  nlohmann::json out = {
      {"source", member(published, "source")},
      {"command", command},
      {"statistic", verify::k_published_statistic},
      {"tolerance", k_reproduce_tolerance},
      {"measured_command", verify::bench_command(request)},
      {"command_matches", !verify::published_command_mismatch(request, command).has_value()}};
  nlohmann::json rows = nlohmann::json::array();
  const auto& tests = member(bench, "tests");
  for (const auto& test : tests.is_array() ? tests : nlohmann::json::array()) {
    const auto& kind = member(test, "kind");
    for (const char* figure : {"speedup", "host_ratio"}) {
      const auto& figures = member(published, figure);
      if (!kind.is_string() || !figures.is_object() || !figures.contains(kind.get<std::string>()) ||
          !figures[kind.get<std::string>()].is_number()) {
        continue;
      }
      const double target = figures[kind.get<std::string>()].get<double>();
      const auto median = number(member(test, "median"), figure);
      rows.push_back(
          {{"test", member(test, "test")},
           {"figure", figure},
           {"statistic", verify::k_published_statistic},
           {"measured", median ? nlohmann::json(*median) : nlohmann::json()},
           {"published", target},
           {"verdict", median ? published_verdict(*median, target) : unmeasured(figure, true)}});
      const auto mean = number(test, figure);
      rows.push_back({{"test", member(test, "test")},
                      {"figure", figure},
                      {"statistic", k_avg_statistic},
                      {"measured", mean ? nlohmann::json(*mean) : nlohmann::json()},
                      {"published", nullptr},
                      {"verdict",
                       mean ? std::string("not judged: the published figures are medians")
                            : unmeasured(figure, false)}});
    }
  }
  out["rows"] = rows;
  return out;
}

nlohmann::json published_comparison_notes(const nlohmann::json& bench) {
  nlohmann::json notes = nlohmann::json::array();
  const nlohmann::json comparison = compare_with_published(bench);
  if (comparison.is_null()) {
    return notes;
  }
  if (!comparison["command_matches"].get<bool>()) {
    notes.push_back("the bench ran '" + comparison["measured_command"].get<std::string>() +
                    "', not the published run's '" + comparison["command"].get<std::string>() +
                    "': its figures are set beside the published ones, but were not measured "
                    "the same way");
  }
  const auto repetitions = whole(member(bench, "arguments"), "repetitions");
  const auto& tests = member(bench, "tests");
  for (const auto& test : tests.is_array() ? tests : nlohmann::json::array()) {
    const auto& samples = member(member(test, "median"), "samples");
    if (!samples.is_object() || !repetitions || !member(test, "test").is_string()) {
      continue;
    }
    std::string counts;
    bool other = false;
    for (const auto& [run, count] : samples.items()) {
      if (!count.is_number_integer()) {
        continue;
      }
      counts += (counts.empty() ? "" : ", ") + std::to_string(count.get<long long>()) + " " + run;
      other = other || count.get<long long>() != *repetitions;
    }
    if (other) {
      notes.push_back(member(test, "test").get<std::string>() + ": the medians are of " + counts +
                      " samples, while the bench asked for -r " + std::to_string(*repetitions) +
                      " (each run's median is still its own)");
    }
  }
  return notes;
}

} // namespace lume_unlock::report

#include "verify/published_run.hpp"

#include "util/text.hpp"
#include "util/text_check.hpp"

#include <sstream>
#include <vector>

namespace lume_unlock::verify {

namespace {

/// The flag/value pairs of a llama-bench command line without its program word and -m pair,
/// or nullopt when a flag has no value.
std::optional<std::map<std::string, std::string>>
flag_pairs(const std::vector<std::string>& words) {
  std::map<std::string, std::string> out;
  if (words.size() % 2 != 0) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < words.size(); i += 2) {
    if (words[i] != "-m" && words[i] != "--model") {
      out[words[i]] = words[i + 1];
    }
  }
  return out;
}

using util::ends_with;

} // namespace

std::string bench_command(const BenchRequest& request) {
  std::string out = "llama-bench";
  for (const std::string& word : llama_bench_flags(request)) {
    out += " " + word;
  }
  return out;
}

std::optional<std::string> published_command_mismatch(const BenchRequest& request,
                                                      std::string_view command) {
  std::istringstream in{std::string(command)};
  std::vector<std::string> words;
  for (std::string word; in >> word;) {
    words.push_back(word);
  }
  const std::string ours = bench_command(request);
  if (words.empty() || !ends_with(words.front(), "llama-bench")) {
    return util::quote_for_message(command) + " is not a llama-bench command (the bench runs " +
           util::quote_for_message(ours) + ")";
  }
  const auto published = flag_pairs({words.begin() + 1, words.end()});
  if (!published) {
    return util::quote_for_message(command) + " has a flag without a value";
  }
  if (*published != *flag_pairs(llama_bench_flags(request))) {
    return "the bench runs " + util::quote_for_message(ours) + ", not the published " +
           util::quote_for_message(command);
  }
  return std::nullopt;
}

nlohmann::json to_json(const PublishedRun& run) {
  return {{"source", run.source},
          {"command", run.command},
          {"statistic", k_published_statistic},
          {"speedup", run.speedup},
          {"host_ratio", run.host_ratio}};
}

} // namespace lume_unlock::verify

// libFuzzer target: the llama.cpp log classifier. Any bytes must give a value or an Error, never a
// crash, a hang or a sanitizer report; accepted values must survive the round trips checked below.
#include "fuzz_check.hpp"
#include "verify/llama_log.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lume_unlock;
  using lume_unlock::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (bool expect_shim : {false, true}) {
    verify::LlamaLogOptions options;
    options.expect_shim = expect_shim;
    const auto report = verify::classify_llama_log(text, options);
    check(!report.reasons.empty());
    // inspect-log --json prints this document: it must serialise whatever bytes the log held.
    (void)verify::to_json(report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return 0;
}

// libFuzzer target: Lume's JSON answers (VM details, lists, images, config, host status). Any bytes
// must give a value or an Error, never a crash, a hang or a sanitizer report; accepted values must
// survive the round trips checked below.
#include "fuzz_check.hpp"
#include "lume/types.hpp"
#include "util/json_reader.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lume_unlock;
  using lume_unlock::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Through the one JSON entry point, as the client reads answers: 1e999 is an error, not a throw.
  const util::JsonParsed parsed = util::parse_json(text);
  if (!parsed.ok()) {
    check(!parsed.error->reason.empty() && parsed.value.is_discarded());
    return 0;
  }
  const nlohmann::json& json = parsed.value;
  (void)lume::vm_details_from_json(json);
  (void)lume::vm_state_from_json(json);
  (void)lume::vm_list_from_json(json);
  (void)lume::images_from_json(json);
  (void)lume::config_from_json(json);
  (void)lume::host_status_from_json(json);
  return 0;
}

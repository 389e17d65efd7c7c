// libFuzzer target: the guest's enablement.json. Any bytes must give a value or an Error, never a
// crash, a hang or a sanitizer report; accepted values must survive the round trips checked below.
#include "enablement/enablement_list.hpp"
#include "fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lume_unlock;
  using lume_unlock::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto list = enablement::parse_enablement_json(text, "enablement.json");
  if (list.ok()) {
    auto again = enablement::parse_enablement_json(enablement::render_enablement_json(list.value()),
                                                   "again");
    check(again.ok() && again.value() == list.value());
  }
  return 0;
}

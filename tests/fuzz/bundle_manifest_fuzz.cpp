// libFuzzer target: a shim bundle's bundle.json. Any bytes must give a value or an Error, never a
// crash, a hang or a sanitizer report; accepted values must survive the round trips checked below.
#include "bundle/bundle.hpp"
#include "fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lume_unlock;
  using lume_unlock::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto manifest = bundle::parse_bundle_manifest(text);
  if (manifest.ok()) {
    check(bundle::parse_bundle_manifest(bundle::render_bundle_manifest(manifest.value())).ok());
  }
  return 0;
}

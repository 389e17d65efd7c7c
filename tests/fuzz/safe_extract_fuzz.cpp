// libFuzzer target: archive extraction (util/safe_extract) of hostile tar and compressed archives.
// Any bytes must be extracted inside the destination or refused, never crash; after a refusal
// nothing may remain under the destination's name.
#include "fuzz_check.hpp"
#include "util/archive.hpp"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

/// One scratch directory per fuzzing process, removed and recreated around every input.
const std::string& scratch() {
  static const std::string path = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "safe_extract_fuzz.XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      std::abort();
    }
    return pattern;
  }();
  return path;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using lume_unlock::fuzz::check;
  namespace fs = std::filesystem;
  const std::string archive = scratch() + "/input";
  const std::string destination = scratch() + "/out";
  std::error_code ec;
  fs::remove_all(destination, ec);
  std::ofstream(archive, std::ios::binary)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  lume_unlock::util::ExtractLimits limits;
  limits.max_entry_bytes = 1 << 20;
  limits.max_total_bytes = 4 << 20;
  limits.max_entries = 256;
  const auto extracted = lume_unlock::util::safe_extract(archive, destination, limits);
  if (!extracted.ok()) {
    check(!fs::exists(destination, ec));
  }
  fs::remove_all(destination, ec);
  return 0;
}

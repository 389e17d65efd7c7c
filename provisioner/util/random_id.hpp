#pragma once

#include <cstddef>
#include <string>

namespace lume_unlock::util {

/// `digits` lower-case hex digits from std::random_device: names that two concurrent runs never
/// share (scratch directories, run ids). Not for secrets.
std::string random_hex(std::size_t digits);

} // namespace lume_unlock::util

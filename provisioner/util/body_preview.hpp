#pragma once

#include <cstddef>
#include <string>

namespace lume_unlock::util {

/// Longest part of a server's body that error messages quote.
inline constexpr std::size_t k_body_preview_limit = 256;

/// A printable preview of a response body for an error message: bytes outside printable ASCII
/// as '.', at most k_body_preview_limit bytes, then "... (N bytes)" when it was cut.
std::string body_preview(const std::string& body);

} // namespace lume_unlock::util

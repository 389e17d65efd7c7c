#pragma once

#include "util/result.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace lume_unlock::macho {

/// Where the reader gets a program's bytes: up to `length` bytes at `offset`, fewer only at the
/// end of the file (none past it). The reader asks only for the parts it needs, each bounded, so
/// a source may be a remote file (apply/program_check reads over SFTP).
using ReadAt = std::function<Result<std::string>(std::uint64_t offset, std::size_t length)>;

/// A source over bytes in memory; `bytes` must outlive it.
ReadAt read_from_bytes(std::string_view bytes);

/// Exactly `length` bytes at `offset`, or an error (category usage) saying that the file is
/// truncated where `what` should be.
Result<std::string>
read_exact(const ReadAt& source, std::uint64_t offset, std::size_t length, const std::string& what);

/// a + b <= limit, without overflow.
bool fits(std::uint64_t a, std::uint64_t b, std::uint64_t limit);

/// The unsigned integer of 4 (or 8) bytes at `at` of `bytes`, which the caller has checked holds
/// them; big-endian when `big`, else little-endian.
std::uint32_t u32(std::string_view bytes, std::size_t at, bool big);
std::uint64_t u64(std::string_view bytes, std::size_t at, bool big);

/// The error of a malformed file: category usage, "<what>: <why>", a hint that the file is damaged.
Error malformed(const std::string& what, const std::string& why);

} // namespace lume_unlock::macho

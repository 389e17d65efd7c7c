#pragma once
// Whole-file reads and writes for tests. Binary, and quiet on failure: the test checks the bytes.

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace lume_unlock::test {

/// The file's bytes (binary mode); empty when it is missing or unreadable.
std::string slurp(const std::filesystem::path& path);

/// Writes `bytes` to `path` (binary, truncating), then sets its permission bits to `mode`.
/// The directory must exist (std::filesystem::permissions throws when the file is not there).
void write_file(const std::filesystem::path& path, const std::string& bytes, unsigned mode = 0644);

/// The permission bits (07777) of `path`, following links; 0 when stat() fails.
mode_t mode_of(const std::filesystem::path& path);

} // namespace lume_unlock::test

#pragma once

#include "util/result.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace lume_unlock::oci {

/// A byte source an upload can read at any offset (a resend after a 401, PATCH chunks).
struct UploadSource {
  std::uint64_t size = 0;
  /// Up to `capacity` bytes at `offset` into `buffer`; fewer only at the end of the source.
  std::function<Result<std::size_t>(std::uint64_t offset, char* buffer, std::size_t capacity)>
      read_at;
  /// Keeps whatever read_at needs alive (an open file) as long as the source.
  std::shared_ptr<void> keep_alive;
};

/// A regular file, opened now and read with pread; a file that shrinks while it is read fails
/// the read. Fails with the path and errno text when it cannot be opened.
Result<UploadSource> file_upload_source(const std::string& path, const std::string& what);

/// Bytes in memory, which must outlive the source.
UploadSource bytes_upload_source(std::string_view bytes);

} // namespace lume_unlock::oci

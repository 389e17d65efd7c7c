#include "fetch/ordered_hasher.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace lume_unlock::fetch {

namespace {
constexpr std::size_t k_block = 1 << 20;
}

OrderedHasher::~OrderedHasher() {
  if (m_fd >= 0) {
    close(m_fd);
  }
}

Result<bool> OrderedHasher::step(std::uint64_t prefix) {
  if (prefix <= hashed()) {
    return false;
  }
  const auto fail = [this](const std::string& why) {
    return Error(ErrorCategory::failure, "cannot hash the partial download '" + m_path + "'", why);
  };
  if (m_fd < 0) {
    m_fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (m_fd < 0) {
      return fail(std::strerror(errno));
    }
    m_block.resize(k_block);
  }
  const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(k_block, prefix - hashed()));
  auto got = ::pread(m_fd, m_block.data(), wanted, static_cast<off_t>(hashed()));
  while (got < 0 && errno == EINTR) {
    got = ::pread(m_fd, m_block.data(), wanted, static_cast<off_t>(hashed()));
  }
  if (got < 0) {
    return fail(std::strerror(errno));
  }
  if (got == 0) {
    return fail("it ends at byte " + std::to_string(hashed()) + ", before the " +
                std::to_string(prefix) + " bytes its chunks claim");
  }
  m_hasher.update(m_block.data(), static_cast<std::size_t>(got));
  return true;
}

Status OrderedHasher::catch_up(std::uint64_t prefix) {
  for (;;) {
    LUME_UNLOCK_TRY_ASSIGN(bool more, step(prefix));
    if (!more) {
      return ok_status();
    }
  }
}

} // namespace lume_unlock::fetch

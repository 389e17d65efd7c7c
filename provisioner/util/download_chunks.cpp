#include "util/atomic_file.hpp"
#include "util/download_parts.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace lume_unlock::util {

namespace {

constexpr std::string_view k_version_line = "lume-unlock chunks 1";
constexpr std::size_t k_block = 1 << 20;

/// The value of a "key value" line, advancing `text` past it; nullopt when the line is not that
/// key.
std::optional<std::string_view> take_line(std::string_view& text, std::string_view key) {
  const auto newline = text.find('\n');
  if (newline == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view line = text.substr(0, newline);
  if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ' ') {
    return std::nullopt;
  }
  text.remove_prefix(newline + 1);
  return line.substr(key.size() + 1);
}

std::optional<std::vector<std::uint64_t>> parse_decimals(std::string_view text) {
  std::vector<std::uint64_t> values;
  while (!text.empty()) {
    const auto space = text.find(' ');
    const auto value = parse_decimal(text.substr(0, space));
    if (!value) {
      return std::nullopt;
    }
    values.push_back(*value);
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
  }
  return values;
}

} // namespace

ChunkPlan ChunkPlan::cut(std::uint64_t size,
                         std::uint64_t chunk_bytes,
                         std::uint64_t prefix,
                         std::string etag) {
  ChunkPlan plan;
  plan.size = size;
  plan.chunk_bytes = chunk_bytes;
  plan.etag = std::move(etag);
  plan.done.resize(static_cast<std::size_t>((size + chunk_bytes - 1) / chunk_bytes));
  prefix = std::min(prefix, size);
  for (std::size_t i = 0; i < plan.count() && plan.start(i) < prefix; ++i) {
    plan.done[i] = std::min(plan.length(i), prefix - plan.start(i));
  }
  return plan;
}

std::uint64_t ChunkPlan::length(std::size_t chunk) const {
  return std::min(chunk_bytes, size - start(chunk));
}

std::uint64_t ChunkPlan::contiguous_prefix() const {
  std::uint64_t prefix = 0;
  for (std::size_t i = 0; i < count(); ++i) {
    prefix += done[i];
    if (!complete(i)) {
      break;
    }
  }
  return prefix;
}

std::uint64_t ChunkPlan::done_bytes() const {
  std::uint64_t sum = 0;
  for (auto bytes : done) {
    sum += bytes;
  }
  return sum;
}

std::string chunk_plan_text(const ChunkPlan& plan) {
  std::string text = std::string(k_version_line) + "\n";
  text += "size " + std::to_string(plan.size) + "\n";
  text += "chunk " + std::to_string(plan.chunk_bytes) + "\n";
  if (!plan.etag.empty()) {
    text += "etag " + plan.etag + "\n";
  }
  text += "done";
  for (auto bytes : plan.done) {
    text += " " + std::to_string(bytes);
  }
  return text + "\n";
}

std::optional<ChunkPlan> parse_chunk_plan(std::string_view text) {
  if (text.substr(0, k_version_line.size() + 1) != std::string(k_version_line) + "\n") {
    return std::nullopt;
  }
  text.remove_prefix(k_version_line.size() + 1);
  const auto size = take_line(text, "size");
  const auto chunk = take_line(text, "chunk");
  if (!size || !chunk) {
    return std::nullopt;
  }
  const auto size_value = parse_decimal(*size);
  const auto chunk_value = parse_decimal(*chunk);
  if (!size_value || !chunk_value || *chunk_value == 0) {
    return std::nullopt;
  }
  ChunkPlan plan = ChunkPlan::cut(*size_value, *chunk_value);
  if (const auto etag = take_line(text, "etag")) {
    const auto strong = strong_etag(*etag);
    if (!strong) {
      return std::nullopt;
    }
    plan.etag = *strong;
  }
  const auto done = take_line(text, "done");
  if (!done || !text.empty()) {
    return std::nullopt;
  }
  const auto values = parse_decimals(*done);
  if (!values || values->size() != plan.count()) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < plan.count(); ++i) {
    if ((*values)[i] > plan.length(i)) {
      return std::nullopt;
    }
  }
  plan.done = *values;
  return plan;
}

std::string chunk_plan_path(const std::string& partial_path) {
  return partial_path + ".chunks";
}

Status save_chunk_plan(const std::string& partial_path, const ChunkPlan& plan) {
  return write_file_atomic(chunk_plan_path(partial_path), chunk_plan_text(plan));
}

std::optional<ChunkPlan> load_chunk_plan(const std::string& partial_path) {
  auto text = read_file(chunk_plan_path(partial_path));
  if (!text) {
    return std::nullopt;
  }
  return parse_chunk_plan(text.value());
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

} // namespace lume_unlock::util

#include "support/zip_writer.hpp"

#include <zlib.h>

#include <stdexcept>

namespace lume_unlock::test {

namespace {

void put16(std::string& out, std::uint32_t value) {
  out.push_back(static_cast<char>(value & 0xff));
  out.push_back(static_cast<char>((value >> 8) & 0xff));
}

void put32(std::string& out, std::uint32_t value) {
  put16(out, value & 0xffff);
  put16(out, value >> 16);
}

/// Raw deflate (no zlib header), as zip stores it.
std::string deflate_raw(const std::string& data) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(data.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) {
    throw std::runtime_error("deflate did not finish");
  }
  return out;
}

constexpr std::uint32_t k_dos_date = (0u << 9) | (1u << 5) | 1u; // 1980-01-01

} // namespace

ZipEntry ZipEntry::file(std::string path, std::string content, std::uint32_t mode) {
  return ZipEntry{std::move(path), std::move(content), 0100000 | mode, true, std::nullopt};
}

ZipEntry ZipEntry::directory(std::string path) {
  return ZipEntry{std::move(path), {}, 040755, false, std::nullopt};
}

ZipEntry ZipEntry::symlink(std::string path, std::string target) {
  return ZipEntry{std::move(path), std::move(target), 0120777, false, std::nullopt};
}

std::string make_zip(const std::vector<ZipEntry>& entries) {
  std::string out;
  std::string central;
  for (const auto& entry : entries) {
    const std::string data = entry.deflate ? deflate_raw(entry.content) : entry.content;
    const auto crc =
        static_cast<std::uint32_t>(crc32(0,
                                         reinterpret_cast<const Bytef*>(entry.content.data()),
                                         static_cast<uInt>(entry.content.size())));
    const std::uint32_t size =
        entry.declared_size.value_or(static_cast<std::uint32_t>(entry.content.size()));
    const std::uint32_t method = entry.deflate ? 8 : 0;
    const auto offset = static_cast<std::uint32_t>(out.size());

    auto common = [&](std::string& header) {
      put16(header, 20); // version needed: 2.0
      put16(header, 0);  // flags
      put16(header, method);
      put16(header, 0); // time
      put16(header, k_dos_date);
      put32(header, crc);
      put32(header, static_cast<std::uint32_t>(data.size()));
      put32(header, size);
      put16(header, static_cast<std::uint32_t>(entry.path.size()));
      put16(header, 0); // extra field length
    };
    put32(out, 0x04034b50);
    common(out);
    out += entry.path;
    out += data;

    put32(central, 0x02014b50);
    put16(central, (3u << 8) | 20u); // made by Unix, 2.0: external attributes hold the mode
    common(central);
    put16(central, 0); // comment length
    put16(central, 0); // disk
    put16(central, 0); // internal attributes
    put32(central, entry.mode << 16);
    put32(central, offset);
    central += entry.path;
  }
  const auto central_offset = static_cast<std::uint32_t>(out.size());
  out += central;
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<std::uint32_t>(entries.size()));
  put16(out, static_cast<std::uint32_t>(entries.size()));
  put32(out, static_cast<std::uint32_t>(central.size()));
  put32(out, central_offset);
  put16(out, 0);
  return out;
}

} // namespace lume_unlock::test

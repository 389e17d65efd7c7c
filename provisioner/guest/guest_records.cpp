#include "guest/guest_records.hpp"

#include "util/text_check.hpp"

namespace lume_unlock::guest {

Result<std::vector<GuestRecord>>
read_guest_records(std::string_view output, const std::string& what, const std::string& hint) {
  auto malformed = [&](const std::string& why) {
    return Error(ErrorCategory::guest, what, why, hint);
  };
  std::vector<GuestRecord> records;
  std::size_t at = 0;
  while (at < output.size()) {
    const std::size_t end = output.find('\n', at);
    if (end == std::string_view::npos) {
      return malformed("unexpected output: a record header without a newline");
    }
    const std::string header(output.substr(at, end - at));
    const std::size_t first = header.find(' ');
    const std::size_t second = first == std::string::npos ? first : header.find(' ', first + 1);
    if (second == std::string::npos) {
      return malformed("unexpected output line " + util::quote_for_message(header));
    }
    const std::string size_text = header.substr(first + 1, second - first - 1);
    if (size_text.empty() || size_text.size() > 12 ||
        size_text.find_first_not_of("0123456789") != std::string::npos) {
      return malformed("unexpected output line " + util::quote_for_message(header));
    }
    const std::size_t size = std::stoul(size_text);
    if (end + 1 + size > output.size()) {
      return malformed("output ends inside the record " + util::quote_for_message(header));
    }
    records.push_back({header.substr(0, first),
                       header.substr(second + 1),
                       std::string(output.substr(end + 1, size))});
    at = end + 1 + size;
  }
  return records;
}

} // namespace lume_unlock::guest

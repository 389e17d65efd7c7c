#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::util {

/// Why a text is not one JSON document.
struct JsonSyntaxError {
  enum class Kind {
    syntax,       ///< not JSON at `byte`
    truncated,    ///< the text ends before the JSON does
    out_of_range, ///< a number beyond double's range, such as 1e999
  };
  Kind kind = Kind::syntax;
  std::size_t byte = 0; ///< where parsing stopped (0 when nlohmann does not say)
  std::string reason;   ///< nlohmann's explanation without its "[json.exception…] " prefix
};

/// The outcome of parse_json: a document, or why there is none.
struct JsonParsed {
  nlohmann::json value; ///< discarded when `error` is set
  std::optional<JsonSyntaxError> error;

  bool ok() const { return !error.has_value(); }
};

/// Parses `text` as one JSON document: the one entry point for every JSON lume-unlock reads
/// (host files, guest files, registry and Lume answers). Never throws: a syntax error, a text cut
/// short and a number beyond double's range all come back in `error` (issue 27).
JsonParsed parse_json(std::string_view text);

/// "at byte 12: syntax error …", "it ends early, after 40 bytes" or "a number is out of range
/// (number overflow parsing '1e999')": the error in words, for a caller's message.
std::string describe_json_error(const JsonSyntaxError& error, std::size_t text_size);

} // namespace lume_unlock::util

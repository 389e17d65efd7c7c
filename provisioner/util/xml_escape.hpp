#pragma once

#include <string>
#include <string_view>

namespace lume_unlock::util {

/// `text` with &, <, >, " and ' replaced by XML entities; every other byte (UTF-8 included) is
/// kept. One function for the launchd plists and the report's SVG chart.
std::string xml_escape(std::string_view text);

} // namespace lume_unlock::util

#include "recipe/install_item.hpp"

#include "recipe/recipe.hpp"

#include <filesystem>

namespace lume_unlock::recipe {

std::string InstallItem::label() const {
  return dest.substr(dest.find_last_of('/') + 1);
}

fetch::ArtifactSource install_source(const Recipe& recipe, const InstallItem& item) {
  if (item.source.kind != fetch::ArtifactSource::Kind::file) {
    return item.source;
  }
  const std::filesystem::path written(item.source.text);
  if (written.is_absolute()) {
    return item.source;
  }
  return fetch::file_source(
      (std::filesystem::path(recipe.path).parent_path() / written).lexically_normal().string());
}

std::string guest_path_of(const InstallItem& item, const std::string& relative) {
  return relative.empty() ? item.dest : item.dest + "/" + relative;
}

std::optional<std::string> dest_problem(const std::string& path) {
  if (path.empty() || path[0] != '/') {
    return "is not an absolute path";
  }
  if (path == "/") {
    return "is the root directory";
  }
  for (const char c : path) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\') {
      return "holds a control character or a backslash";
    }
  }
  if (path.back() == '/') {
    return "ends with '/'";
  }
  std::size_t at = 1;
  while (at <= path.size()) {
    const std::size_t end = std::min(path.find('/', at), path.size());
    const std::string part = path.substr(at, end - at);
    if (part.empty() || part == "." || part == "..") {
      return "is not a normal path (empty, '.' or '..' component)";
    }
    at = end + 1;
  }
  return std::nullopt;
}

} // namespace lume_unlock::recipe

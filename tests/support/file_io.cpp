#include "support/file_io.hpp"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace lume_unlock::test {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::filesystem::path& path, const std::string& bytes, unsigned mode) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  std::filesystem::permissions(path, static_cast<std::filesystem::perms>(mode));
}

mode_t mode_of(const std::filesystem::path& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

} // namespace lume_unlock::test

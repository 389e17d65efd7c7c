#pragma once

// A directory tree as comparable data, for lume-sim's --guest-home self-tests: every entry's
// type, permission bits and content (file bytes or symlink target), read with lstat so
// symlinks are never followed.

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <string>

namespace lume_sim_test {

struct HomeEntry {
  char type = '?'; ///< 'f' file, 'd' directory, 'l' symlink
  unsigned mode = 0;
  std::string content; ///< file bytes or symlink target
  bool operator==(const HomeEntry& o) const {
    return type == o.type && mode == o.mode && content == o.content;
  }
};

inline std::ostream& operator<<(std::ostream& out, const HomeEntry& e) {
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", e.mode);
  return out << e.type << ' ' << mode << " '" << e.content << "'";
}

/// Relative path -> entry, for everything under `root` (not `root` itself).
inline std::map<std::string, HomeEntry> snapshot(const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  std::map<std::string, HomeEntry> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    struct stat st {};
    lstat(it->path().c_str(), &st);
    HomeEntry e;
    e.mode = st.st_mode & 0777;
    if (S_ISLNK(st.st_mode)) {
      e.type = 'l';
      e.mode = 0; // Linux symlinks have no mode of their own
      e.content = fs::read_symlink(it->path()).string();
    } else if (S_ISDIR(st.st_mode)) {
      e.type = 'd';
    } else if (S_ISREG(st.st_mode)) {
      e.type = 'f';
      std::ifstream in(it->path(), std::ios::binary);
      std::stringstream s;
      s << in.rdbuf();
      e.content = s.str();
    }
    out[it->path().lexically_relative(root).generic_string()] = e;
  }
  return out;
}

} // namespace lume_sim_test

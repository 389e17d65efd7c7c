#include "guest_home_archive.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

namespace lume_sim {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_block = 512;
constexpr const char* k_global_name = "lume-sim-guest-home";
constexpr const char* k_marker_key = "LUMESIM.guest-home";
constexpr const char* k_marker_value = "1";

// ustar header fields: offset and length (POSIX.1-2001, pax "ustar Interchange Format").
struct Field {
  std::size_t offset;
  std::size_t length;
};
constexpr Field k_name{0, 100};
constexpr Field k_mode{100, 8};
constexpr Field k_uid{108, 8};
constexpr Field k_gid{116, 8};
constexpr Field k_size{124, 12};
constexpr Field k_mtime{136, 12};
constexpr Field k_checksum{148, 8};
constexpr std::size_t k_typeflag = 156;
constexpr Field k_linkname{157, 100};
constexpr Field k_magic{257, 6};
constexpr Field k_version{263, 2};
constexpr Field k_devmajor{329, 8};
constexpr Field k_devminor{337, 8};
constexpr Field k_prefix{345, 155};

std::string errno_text() {
  return std::strerror(errno);
}

/// An open descriptor, closed on scope exit.
class Fd {
public:
  explicit Fd(int fd) : m_fd(fd) {}
  ~Fd() {
    if (m_fd >= 0) {
      close(m_fd);
    }
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return m_fd; }

private:
  int m_fd;
};

std::uint64_t padded(std::uint64_t size) {
  return (size + k_block - 1) / k_block * k_block;
}

// --- writing ---------------------------------------------------------------------------------

/// Zero-padded octal filling all but the last byte of the field, which stays NUL.
void put_octal(std::string& block, Field f, std::uint64_t value) {
  std::string digits(f.length - 1, '0');
  for (std::size_t i = digits.size(); i-- > 0 && value != 0; value >>= 3) {
    digits[i] = static_cast<char>('0' + (value & 7));
  }
  if (value != 0) {
    throw GuestHomeError("a size of more than 8 GiB does not fit a ustar header");
  }
  block.replace(f.offset, digits.size(), digits);
}

unsigned checksum_of(const std::string& block) {
  unsigned sum = 0;
  for (std::size_t i = 0; i < k_block; ++i) {
    const bool in_field = i >= k_checksum.offset && i < k_checksum.offset + k_checksum.length;
    sum += in_field ? static_cast<unsigned char>(' ') : static_cast<unsigned char>(block[i]);
  }
  return sum;
}

/// One ustar header; `name` and `link` must fit their fields (longer ones travel in pax).
std::string header(const std::string& name,
                   char type,
                   unsigned mode,
                   std::uint64_t size,
                   const std::string& link = {}) {
  std::string block(k_block, '\0');
  block.replace(k_name.offset, std::min(name.size(), k_name.length), name, 0, k_name.length);
  put_octal(block, k_mode, mode);
  put_octal(block, k_uid, 0);
  put_octal(block, k_gid, 0);
  put_octal(block, k_size, size);
  put_octal(block, k_mtime, 0);
  block[k_typeflag] = type;
  block.replace(
      k_linkname.offset, std::min(link.size(), k_linkname.length), link, 0, k_linkname.length);
  block.replace(k_magic.offset, k_magic.length, "ustar\0", k_magic.length);
  block.replace(k_version.offset, k_version.length, "00");
  put_octal(block, k_devmajor, 0);
  put_octal(block, k_devminor, 0);
  char sum[8];
  std::snprintf(sum, sizeof sum, "%06o", checksum_of(block));
  block.replace(k_checksum.offset, 6, sum, 6);
  block[k_checksum.offset + 6] = '\0';
  block[k_checksum.offset + 7] = ' ';
  return block;
}

/// A pax record "<length> <key>=<value>\n", where length counts the whole record.
std::string pax_record(const std::string& key, const std::string& value) {
  const std::size_t rest = 1 + key.size() + 1 + value.size() + 1;
  std::size_t length = rest + 1;
  while (std::to_string(length).size() + rest != length) {
    length = std::to_string(length).size() + rest;
  }
  return std::to_string(length) + " " + key + "=" + value + "\n";
}

std::string global_marker_record() {
  return pax_record(k_marker_key, k_marker_value);
}

/// Appends a header or data padded to whole blocks.
void put_padded(std::string& out, const std::string& bytes) {
  out += bytes;
  out.append(padded(bytes.size()) - bytes.size(), '\0');
}

struct Item {
  std::string path; ///< relative, '/'-separated, without a trailing '/'
  char type;        ///< '0', '5' or '2'
  unsigned mode;
  std::uint64_t size = 0;
  std::string link;
};

/// Lists `dir` (relative name `rel`) depth first without following symlinks.
void collect(const fs::path& dir, const std::string& rel, std::vector<Item>& items) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    throw GuestHomeError("cannot list '" + (rel.empty() ? dir.string() : rel) +
                         "': " + ec.message());
  }
  for (const auto& entry : it) {
    const std::string name = rel.empty() ? entry.path().filename().string()
                                         : rel + "/" + entry.path().filename().string();
    struct stat st {};
    if (lstat(entry.path().c_str(), &st) != 0) {
      throw GuestHomeError("cannot stat '" + name + "': " + errno_text());
    }
    const unsigned mode = st.st_mode & 0777;
    if (S_ISDIR(st.st_mode)) {
      items.push_back({name, '5', mode, 0, {}});
      collect(entry.path(), name, items);
    } else if (S_ISREG(st.st_mode)) {
      items.push_back({name, '0', mode, static_cast<std::uint64_t>(st.st_size), {}});
    } else if (S_ISLNK(st.st_mode)) {
      const fs::path target = fs::read_symlink(entry.path(), ec);
      if (ec) {
        throw GuestHomeError("cannot read symlink '" + name + "': " + ec.message());
      }
      items.push_back({name, '2', mode, 0, target.string()});
    }
    // Sockets, FIFOs and devices are runtime objects, not disk content: left out.
  }
}

/// Appends the file's bytes, exactly `size` of them (a file that changed size meanwhile fails).
void put_file(std::string& out, const fs::path& path, const std::string& name, std::uint64_t size) {
  Fd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    throw GuestHomeError("cannot read '" + name + "': " + errno_text());
  }
  const std::size_t start = out.size();
  out.resize(start + size);
  std::uint64_t done = 0;
  while (done < size) {
    const ssize_t n = read(fd.get(), &out[start + done], size - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      throw GuestHomeError("'" + name + "' changed while it was archived");
    }
    done += static_cast<std::uint64_t>(n);
  }
  out.append(padded(size) - size, '\0');
}

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      throw GuestHomeError("write failed: " + errno_text());
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

// --- reading ---------------------------------------------------------------------------------

/// What one header of the archive says.
struct Entry {
  std::string path;
  char type;
  unsigned mode;
  std::uint64_t size;
  std::uint64_t offset; ///< of the data in the archive
  std::string link;
};

std::string field(const std::string& block, Field f) {
  std::string s = block.substr(f.offset, f.length);
  return s.substr(0, s.find('\0'));
}

std::optional<std::uint64_t> octal(const std::string& block, Field f) {
  const std::string s = field(block, f);
  std::size_t i = s.find_first_not_of(' ');
  if (i == std::string::npos) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  for (; i < s.size() && s[i] != ' '; ++i) {
    if (s[i] < '0' || s[i] > '7') {
      return std::nullopt;
    }
    value = value * 8 + static_cast<std::uint64_t>(s[i] - '0');
  }
  return value;
}

bool is_ustar_header(const std::string& block) {
  if (block.compare(k_magic.offset, k_magic.length, "ustar\0", k_magic.length) != 0 ||
      block.compare(k_version.offset, k_version.length, "00") != 0) {
    return false;
  }
  const auto sum = octal(block, k_checksum);
  return sum && *sum == checksum_of(block);
}

/// Reads `size` bytes at `offset`; fewer when the file ends first.
std::string read_at(int fd, std::uint64_t offset, std::size_t size) {
  std::string out(size, '\0');
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = pread(fd, &out[done], size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  out.resize(done);
  return out;
}

/// True when the archive open as `fd` starts with our global header and its marker record.
bool has_marker(int fd) {
  const std::string block = read_at(fd, 0, k_block);
  const std::string record = global_marker_record();
  return block.size() == k_block && is_ustar_header(block) && block[k_typeflag] == 'g' &&
         field(block, k_name) == k_global_name && octal(block, k_size) == record.size() &&
         read_at(fd, k_block, record.size()) == record;
}

/// Parses pax records into `path` / `linkpath`; other keys are not part of the format.
void read_pax(const std::string& data,
              std::optional<std::string>& path,
              std::optional<std::string>& link) {
  std::size_t at = 0;
  while (at < data.size()) {
    const std::size_t space = data.find(' ', at);
    std::size_t length = 0;
    try {
      length = space == std::string::npos ? 0 : std::stoul(data.substr(at, space - at));
    } catch (const std::exception&) {
      length = 0;
    }
    if (length == 0 || at + length > data.size() || data[at + length - 1] != '\n') {
      throw GuestHomeError("malformed pax record at archive data offset " + std::to_string(at));
    }
    const std::string record = data.substr(space + 1, at + length - 1 - (space + 1));
    const std::size_t eq = record.find('=');
    const std::string key = record.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : record.substr(eq + 1);
    if (key == "path") {
      path = value;
    } else if (key == "linkpath") {
      link = value;
    } else {
      throw GuestHomeError("unsupported pax record '" + key + "'");
    }
    at += length;
  }
}

std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = path.find('/', start);
    out.push_back(path.substr(start, slash - start));
    if (slash == std::string::npos) {
      return out;
    }
    start = slash + 1;
  }
}

/// The safety rules of restore_guest_home, for one entry (its parents are already checked).
void check_entry(const Entry& e,
                 const std::set<std::string>& seen,
                 const std::set<std::string>& directories) {
  const std::string quoted = "entry '" + e.path + "'";
  if (e.path.empty()) {
    throw GuestHomeError("an entry has an empty path");
  }
  if (e.path.find('\0') != std::string::npos) {
    throw GuestHomeError(quoted + " has a NUL in its path");
  }
  if (e.path.front() == '/') {
    throw GuestHomeError(quoted + " is an absolute path");
  }
  for (const std::string& c : components(e.path)) {
    if (c == "..") {
      throw GuestHomeError(quoted + " has a '..' component");
    }
    if (c.empty() || c == ".") {
      throw GuestHomeError(quoted + " has an empty or '.' component");
    }
  }
  if (e.type != '0' && e.type != '5' && e.type != '2') {
    throw GuestHomeError(quoted + " has unsupported type '" + std::string(1, e.type) + "'");
  }
  if (e.type != '0' && e.size != 0) {
    throw GuestHomeError(quoted + " is a directory or symlink with data");
  }
  if (seen.count(e.path) != 0) {
    throw GuestHomeError(quoted + " appears twice");
  }
  // Parents must be directories of the archive itself, so no path goes through a symlink.
  const std::size_t slash = e.path.rfind('/');
  if (slash != std::string::npos && directories.count(e.path.substr(0, slash)) == 0) {
    throw GuestHomeError(quoted + " does not follow a directory entry for '" +
                         e.path.substr(0, slash) + "'");
  }
  if (e.type == '2') {
    const std::string link = "symlink '" + e.path + "' -> '" + e.link + "'";
    if (e.link.empty() || e.link.find('\0') != std::string::npos) {
      throw GuestHomeError(link + " has an empty or invalid target");
    }
    if (e.link.front() == '/') {
      throw GuestHomeError(link + " points to an absolute path");
    }
    // Only leading '..' climbs: the link's parent is a real directory, so their count is exact;
    // a '..' after a name could undo a symlink's resolution instead of the name.
    long depth = static_cast<long>(components(e.path).size()) - 1;
    bool named = false;
    for (const std::string& c : components(e.link)) {
      if (c == "..") {
        if (named) {
          throw GuestHomeError(link + " has a '..' after a name");
        }
        if (--depth < 0) {
          throw GuestHomeError(link + " leads out of the home");
        }
      } else if (!c.empty() && c != ".") {
        named = true;
      }
    }
  }
}

/// Reads and checks every header after the global one; nothing on disk changes.
std::vector<Entry> read_entries(int fd) {
  struct stat st {};
  fstat(fd, &st);
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  std::vector<Entry> entries;
  std::set<std::string> seen;
  std::set<std::string> directories;
  std::optional<std::string> pax_path;
  std::optional<std::string> pax_link;
  std::uint64_t at = k_block + padded(global_marker_record().size());
  while (true) {
    const std::string block = read_at(fd, at, k_block);
    if (block.size() < k_block) {
      throw GuestHomeError("the archive ends without its end-of-archive blocks");
    }
    if (block == std::string(k_block, '\0')) {
      break;
    }
    const std::string where = "header at offset " + std::to_string(at);
    if (!is_ustar_header(block)) {
      throw GuestHomeError(where + " is not a ustar header (bad magic or checksum)");
    }
    const auto size = octal(block, k_size);
    const auto mode = octal(block, k_mode);
    if (!size || !mode || at + k_block + *size > file_size) {
      throw GuestHomeError(where + " has a bad size or mode, or its data is cut off");
    }
    const char type = block[k_typeflag] == '\0' ? '0' : block[k_typeflag];
    const std::uint64_t data = at + k_block;
    at = data + padded(*size);
    if (type == 'x') {
      read_pax(read_at(fd, data, static_cast<std::size_t>(*size)), pax_path, pax_link);
      continue;
    }
    Entry e;
    const std::string prefix = field(block, k_prefix);
    e.path = pax_path.value_or(prefix.empty() ? field(block, k_name)
                                              : prefix + "/" + field(block, k_name));
    e.link = pax_link.value_or(field(block, k_linkname));
    pax_path.reset();
    pax_link.reset();
    e.type = type;
    e.mode = static_cast<unsigned>(*mode) & 0777;
    e.size = *size;
    e.offset = data;
    if (type == '5' && e.path.size() > 1 && e.path.back() == '/') {
      e.path.pop_back();
    }
    check_entry(e, seen, directories);
    seen.insert(e.path);
    if (type == '5') {
      directories.insert(e.path);
    }
    entries.push_back(std::move(e));
  }
  if (pax_path || pax_link) {
    throw GuestHomeError("a pax header is not followed by its entry");
  }
  return entries;
}

/// Removes `path` and, for a directory, everything under it (made writable first, so read-only
/// directories of the guest go too). Symlinks are removed, never followed.
void remove_tree(const fs::path& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    throw GuestHomeError("cannot stat '" + path.string() + "': " + errno_text());
  }
  if (S_ISDIR(st.st_mode)) {
    if (chmod(path.c_str(), 0700) != 0) {
      throw GuestHomeError("cannot open up '" + path.string() + "': " + errno_text());
    }
    std::error_code ec;
    std::vector<fs::path> children;
    for (const auto& child : fs::directory_iterator(path, ec)) {
      children.push_back(child.path());
    }
    if (ec) {
      throw GuestHomeError("cannot list '" + path.string() + "': " + ec.message());
    }
    for (const auto& child : children) {
      remove_tree(child);
    }
    if (rmdir(path.c_str()) != 0) {
      throw GuestHomeError("cannot remove '" + path.string() + "': " + errno_text());
    }
  } else if (unlink(path.c_str()) != 0) {
    throw GuestHomeError("cannot remove '" + path.string() + "': " + errno_text());
  }
}

void extract(int archive, const Entry& e, const fs::path& to) {
  const std::string quoted = "'" + e.path + "'";
  if (e.type == '5') {
    if (mkdir(to.c_str(), 0700) != 0) {
      throw GuestHomeError("cannot create directory " + quoted + ": " + errno_text());
    }
    return; // its mode is set once its contents are in
  }
  if (e.type == '2') {
    if (symlink(e.link.c_str(), to.c_str()) != 0) {
      throw GuestHomeError("cannot create symlink " + quoted + ": " + errno_text());
    }
    return;
  }
  Fd fd(open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) {
    throw GuestHomeError("cannot create " + quoted + ": " + errno_text());
  }
  constexpr std::uint64_t k_piece = 1 << 20;
  for (std::uint64_t done = 0; done < e.size;) {
    const std::string bytes = read_at(
        archive, e.offset + done, static_cast<std::size_t>(std::min(k_piece, e.size - done)));
    if (bytes.empty()) {
      throw GuestHomeError("the archive ends inside " + quoted);
    }
    write_all(fd.get(), bytes.data(), bytes.size());
    done += bytes.size();
  }
  if (fchmod(fd.get(), e.mode) != 0) {
    throw GuestHomeError("cannot set the mode of " + quoted + ": " + errno_text());
  }
}

} // namespace

std::size_t write_guest_home_archive(const fs::path& home, const fs::path& out) {
  std::error_code ec;
  if (!fs::is_directory(home, ec)) {
    throw GuestHomeError("'" + home.string() + "' is not a directory");
  }
  std::vector<Item> items;
  collect(home, "", items);
  // Sorted by path: the same home gives the same bytes, and a parent sorts before its children.
  std::sort(
      items.begin(), items.end(), [](const Item& a, const Item& b) { return a.path < b.path; });

  std::string archive;
  const std::string marker = global_marker_record();
  archive += header(k_global_name, 'g', 0644, marker.size());
  put_padded(archive, marker);
  for (const Item& item : items) {
    const std::string name = item.type == '5' ? item.path + "/" : item.path;
    std::string pax;
    if (name.size() > k_name.length) {
      pax += pax_record("path", name);
    }
    if (item.link.size() > k_linkname.length) {
      pax += pax_record("linkpath", item.link);
    }
    if (!pax.empty()) {
      archive += header("PaxHeader", 'x', 0644, pax.size());
      put_padded(archive, pax);
    }
    archive += header(name, item.type, item.mode, item.size, item.link);
    if (item.type == '0') {
      put_file(archive, home / item.path, item.path, item.size);
    }
  }
  archive.append(2 * k_block, '\0');

  const fs::path temporary = out.string() + ".lume-sim-tmp";
  {
    Fd fd(open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) {
      throw GuestHomeError("cannot write '" + temporary.string() + "': " + errno_text());
    }
    write_all(fd.get(), archive.data(), archive.size());
  }
  if (rename(temporary.c_str(), out.c_str()) != 0) {
    throw GuestHomeError("cannot replace '" + out.string() + "': " + errno_text());
  }
  return items.size();
}

bool is_guest_home_archive(const fs::path& disk) {
  Fd fd(open(disk.c_str(), O_RDONLY | O_CLOEXEC));
  return fd.get() >= 0 && has_marker(fd.get());
}

bool restore_guest_home(const fs::path& disk, const fs::path& home) {
  Fd archive(open(disk.c_str(), O_RDONLY | O_CLOEXEC));
  if (archive.get() < 0 || !has_marker(archive.get())) {
    return false;
  }
  const std::vector<Entry> entries = read_entries(archive.get());

  struct stat home_st {};
  if (stat(home.c_str(), &home_st) != 0 || !S_ISDIR(home_st.st_mode)) {
    throw GuestHomeError("'" + home.string() + "' is not a directory");
  }
  std::error_code ec;
  std::vector<fs::path> old;
  for (const auto& child : fs::directory_iterator(home, ec)) {
    old.push_back(child.path());
  }
  if (ec) {
    throw GuestHomeError("cannot list '" + home.string() + "': " + ec.message());
  }
  for (const auto& child : old) {
    remove_tree(child);
  }

  // The archive says uid 0; the guest (guest-sim's user) must own its home's contents.
  const bool chown_to_owner = geteuid() == 0;
  for (const Entry& e : entries) {
    const fs::path to = home / e.path;
    extract(archive.get(), e, to);
    if (chown_to_owner && lchown(to.c_str(), home_st.st_uid, home_st.st_gid) != 0) {
      throw GuestHomeError("cannot give '" + e.path + "' to the home's owner: " + errno_text());
    }
  }
  // Directory modes last, deepest first: a read-only directory must first receive its contents.
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (it->type == '5' && chmod((home / it->path).c_str(), it->mode) != 0) {
      throw GuestHomeError("cannot set the mode of '" + it->path + "': " + errno_text());
    }
  }
  return true;
}

} // namespace lume_sim

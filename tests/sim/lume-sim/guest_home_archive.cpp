#include "guest_home_archive.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <vector>

namespace lume_sim {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_block = 512;

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

/// The format check: the archive's first two blocks, a pax global header named
/// "lume-sim-guest-home" whose one record is "LUMESIM.guest-home=1". libarchive writes no
/// global headers (and reads past them), so these two blocks are composed here, once.
const std::string& marker() {
  static const std::string bytes = [] {
    const std::string record = "24 LUMESIM.guest-home=1\n";
    std::string block(k_block, '\0');
    const auto put = [&](std::size_t at, const std::string& text) {
      block.replace(at, text.size(), text);
    };
    put(0, "lume-sim-guest-home");
    put(100, "0000644");
    put(108, "0000000");
    put(116, "0000000");
    char size[12];
    std::snprintf(size, sizeof size, "%011o", static_cast<unsigned>(record.size()));
    put(124, size);
    put(136, "00000000000");
    block[156] = 'g';
    put(257,
        std::string("ustar\0"
                    "00",
                    8));
    put(329, "0000000");
    put(337, "0000000");
    unsigned sum = 8 * ' '; // the checksum field counts as spaces
    for (unsigned char c : block) {
      sum += c;
    }
    char checksum[8];
    std::snprintf(checksum, sizeof checksum, "%06o", sum);
    put(148, std::string(checksum, 6) + std::string("\0 ", 2));
    return block + record + std::string(k_block - record.size(), '\0');
  }();
  return bytes;
}

/// Reads `size` bytes at `offset`; fewer when the file ends first.
std::string read_at(int fd, off_t offset, std::size_t size) {
  std::string out(size, '\0');
  const ssize_t n = pread(fd, out.data(), size, offset);
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

struct ArchiveFree {
  void operator()(archive* a) const { archive_free(a); }
};
using Archive = std::unique_ptr<archive, ArchiveFree>;

std::string libarchive_text(archive* a) {
  const char* text = archive_error_string(a);
  return text != nullptr ? text : "libarchive failed";
}

// --- writing ---------------------------------------------------------------------------------

struct Item {
  std::string path; ///< relative, '/'-separated
  struct stat st;
  std::string link;
};

/// Lists `dir` (relative name `rel`) depth first without following symlinks. Sockets, FIFOs and
/// devices are runtime objects, not disk content: left out.
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
    Item item{name, {}, {}};
    if (lstat(entry.path().c_str(), &item.st) != 0) {
      throw GuestHomeError("cannot stat '" + name + "': " + errno_text());
    }
    if (S_ISLNK(item.st.st_mode)) {
      item.link = fs::read_symlink(entry.path(), ec).string();
      if (ec) {
        throw GuestHomeError("cannot read symlink '" + name + "': " + ec.message());
      }
    }
    if (S_ISDIR(item.st.st_mode) || S_ISREG(item.st.st_mode) || S_ISLNK(item.st.st_mode)) {
      items.push_back(item);
    }
    if (S_ISDIR(item.st.st_mode)) {
      collect(entry.path(), name, items);
    }
  }
}

/// One entry's header (mtime 0, uid/gid 0, no owner names) and, for a file, exactly its size in
/// bytes (a file that changed size meanwhile fails).
void put_item(archive* a, const fs::path& home, const Item& item) {
  std::unique_ptr<archive_entry, void (*)(archive_entry*)> e(archive_entry_new(),
                                                             archive_entry_free);
  archive_entry_set_pathname(e.get(), item.path.c_str());
  archive_entry_set_filetype(e.get(), item.st.st_mode & S_IFMT);
  archive_entry_set_perm(e.get(), item.st.st_mode & 0777);
  const auto size = S_ISREG(item.st.st_mode) ? item.st.st_size : 0;
  archive_entry_set_size(e.get(), size);
  if (S_ISLNK(item.st.st_mode)) {
    archive_entry_set_symlink(e.get(), item.link.c_str());
  }
  if (archive_write_header(a, e.get()) != ARCHIVE_OK) {
    throw GuestHomeError("cannot archive '" + item.path + "': " + libarchive_text(a));
  }
  if (size == 0) {
    return;
  }
  Fd fd(open((home / item.path).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    throw GuestHomeError("cannot read '" + item.path + "': " + errno_text());
  }
  std::vector<char> buffer(1 << 16);
  for (off_t done = 0; done < size;) {
    const ssize_t n = read(fd.get(), buffer.data(), std::min<off_t>(buffer.size(), size - done));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0 || archive_write_data(a, buffer.data(), static_cast<std::size_t>(n)) != n) {
      throw GuestHomeError("'" + item.path + "' changed while it was archived");
    }
    done += n;
  }
}

// --- reading ---------------------------------------------------------------------------------

/// What one entry of the archive says, with tar's type letters.
struct Entry {
  std::string path;
  char type;
  unsigned mode;
  std::int64_t size;
  std::string link;
};

char type_letter(archive_entry* e) {
  if (archive_entry_hardlink(e) != nullptr) {
    return '1';
  }
  switch (archive_entry_filetype(e)) {
  case AE_IFREG:
    return '0';
  case AE_IFLNK:
    return '2';
  case AE_IFCHR:
    return '3';
  case AE_IFBLK:
    return '4';
  case AE_IFDIR:
    return '5';
  case AE_IFIFO:
    return '6';
  default:
    return '?';
  }
}

/// Calls `visit` with every entry after the marker, the archive positioned at its data. Throws
/// GuestHomeError when libarchive finds the archive malformed.
void for_each_entry(const fs::path& disk,
                    const std::function<void(const Entry&, archive*)>& visit) {
  Archive a(archive_read_new());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_filename(a.get(), disk.c_str(), 1 << 16) != ARCHIVE_OK) {
    throw GuestHomeError("cannot read the archive: " + libarchive_text(a.get()));
  }
  archive_entry* raw = nullptr;
  int rc = ARCHIVE_OK;
  while ((rc = archive_read_next_header(a.get(), &raw)) == ARCHIVE_OK) {
    Entry e{archive_entry_pathname(raw) != nullptr ? archive_entry_pathname(raw) : "",
            type_letter(raw),
            static_cast<unsigned>(archive_entry_perm(raw)),
            archive_entry_size(raw),
            archive_entry_symlink(raw) != nullptr    ? archive_entry_symlink(raw)
            : archive_entry_hardlink(raw) != nullptr ? archive_entry_hardlink(raw)
                                                     : ""};
    if (e.type == '5' && e.path.size() > 1 && e.path.back() == '/') {
      e.path.pop_back();
    }
    visit(e, a.get());
  }
  if (rc != ARCHIVE_EOF) {
    throw GuestHomeError("malformed archive: " + libarchive_text(a.get()));
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

/// A symlink's target may climb only with leading '..' and never above the home: the link's
/// parent is a real directory, so their count is exact; a '..' after a name could undo a
/// symlink's resolution instead of the name.
void check_link(const Entry& e) {
  const std::string link = "symlink '" + e.path + "' -> '" + e.link + "'";
  if (e.link.empty()) {
    throw GuestHomeError(link + " has an empty or invalid target");
  }
  if (e.link.front() == '/') {
    throw GuestHomeError(link + " points to an absolute path");
  }
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

/// The safety rules of restore_guest_home, for one entry (its parents are already checked).
void check_entry(const Entry& e,
                 const std::set<std::string>& seen,
                 const std::set<std::string>& directories) {
  const std::string quoted = "entry '" + e.path + "'";
  if (e.path.empty()) {
    throw GuestHomeError("an entry has an empty path");
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
    check_link(e);
  }
}

/// Reads and checks every entry; nothing on disk changes.
std::vector<Entry> checked_entries(const fs::path& disk) {
  Fd fd(open(disk.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (fd.get() < 0 || fstat(fd.get(), &st) != 0 || st.st_size % k_block != 0 ||
      read_at(fd.get(), st.st_size - 2 * k_block, 2 * k_block) != std::string(2 * k_block, '\0')) {
    throw GuestHomeError("the archive ends without its end-of-archive blocks");
  }
  std::vector<Entry> entries;
  std::set<std::string> seen;
  std::set<std::string> directories;
  for_each_entry(disk, [&](const Entry& e, archive*) {
    check_entry(e, seen, directories);
    seen.insert(e.path);
    if (e.type == '5') {
      directories.insert(e.path);
    }
    entries.push_back(e);
  });
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

void extract(archive* a, const Entry& e, const fs::path& to) {
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
  if (archive_read_data_into_fd(a, fd.get()) != ARCHIVE_OK) {
    throw GuestHomeError("cannot extract " + quoted + ": " + libarchive_text(a));
  }
  if (fchmod(fd.get(), e.mode) != 0) {
    throw GuestHomeError("cannot set the mode of " + quoted + ": " + errno_text());
  }
}

/// Empties `home`, leaving the directory itself.
void empty_home(const fs::path& home) {
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

  const fs::path temporary = out.string() + ".lume-sim-tmp";
  {
    Fd fd(open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0 || write(fd.get(), marker().data(), marker().size()) !=
                            static_cast<ssize_t>(marker().size())) {
      throw GuestHomeError("cannot write '" + temporary.string() + "': " + errno_text());
    }
    // pax where a name needs it, ustar otherwise; no padding past the two end blocks.
    Archive a(archive_write_new());
    if (archive_write_set_format_pax_restricted(a.get()) != ARCHIVE_OK ||
        archive_write_set_bytes_per_block(a.get(), k_block) != ARCHIVE_OK ||
        archive_write_set_bytes_in_last_block(a.get(), 1) != ARCHIVE_OK ||
        archive_write_open_fd(a.get(), fd.get()) != ARCHIVE_OK) {
      throw GuestHomeError("cannot write '" + temporary.string() +
                           "': " + libarchive_text(a.get()));
    }
    for (const Item& item : items) {
      put_item(a.get(), home, item);
    }
    if (archive_write_close(a.get()) != ARCHIVE_OK) {
      throw GuestHomeError("cannot write '" + temporary.string() +
                           "': " + libarchive_text(a.get()));
    }
  }
  if (rename(temporary.c_str(), out.c_str()) != 0) {
    throw GuestHomeError("cannot replace '" + out.string() + "': " + errno_text());
  }
  return items.size();
}

bool is_guest_home_archive(const fs::path& disk) {
  Fd fd(open(disk.c_str(), O_RDONLY | O_CLOEXEC));
  return fd.get() >= 0 && read_at(fd.get(), 0, marker().size()) == marker();
}

bool restore_guest_home(const fs::path& disk, const fs::path& home) {
  if (!is_guest_home_archive(disk)) {
    return false;
  }
  const std::vector<Entry> entries = checked_entries(disk);
  struct stat home_st {};
  if (stat(home.c_str(), &home_st) != 0 || !S_ISDIR(home_st.st_mode)) {
    throw GuestHomeError("'" + home.string() + "' is not a directory");
  }
  empty_home(home);
  // The archive says uid 0; the guest (guest-sim's user) must own its home's contents.
  const bool chown_to_owner = geteuid() == 0;
  for_each_entry(disk, [&](const Entry& e, archive* a) {
    const fs::path to = home / e.path;
    extract(a, e, to);
    if (chown_to_owner && lchown(to.c_str(), home_st.st_uid, home_st.st_gid) != 0) {
      throw GuestHomeError("cannot give '" + e.path + "' to the home's owner: " + errno_text());
    }
  });
  // Directory modes last, deepest first: a read-only directory must first receive its contents.
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (it->type == '5' && chmod((home / it->path).c_str(), it->mode) != 0) {
      throw GuestHomeError("cannot set the mode of '" + it->path + "': " + errno_text());
    }
  }
  return true;
}

} // namespace lume_sim


#include "util/archive.hpp"
#include "util/atomic_file.hpp"
#include "util/text.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <climits>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <memory>
#include <vector>

namespace lume_unlock::util {

namespace {

namespace fs = std::filesystem;

constexpr int k_max_link_hops = 40; // as the kernel's own bound on nested symbolic links
constexpr std::size_t k_block = 1 << 16;

std::string
under(const std::string& root, const std::vector<std::string>& parts, std::size_t count) {
  std::string path = root;
  for (std::size_t i = 0; i < count; ++i) {
    path += '/';
    path += parts[i];
  }
  return path;
}

/// Follows `target` from the directory `start` (components below `root`) the way the kernel
/// would, substituting the symbolic links already on disk, and says whether it stays inside
/// `root`. Links created later are caught by the final pass over the whole tree.
bool link_stays_inside(const std::string& root,
                       std::vector<std::string> start,
                       const std::string& target) {
  if (target.empty() || target.front() == '/') {
    return false;
  }
  const auto first = path_components(target);
  std::deque<std::string> pending(first.begin(), first.end());
  int hops = 0;
  while (!pending.empty()) {
    auto part = std::move(pending.front());
    pending.pop_front();
    if (part == "..") {
      if (start.empty()) {
        return false;
      }
      start.pop_back();
      continue;
    }
    start.push_back(part);
    auto here = under(root, start, start.size());
    struct stat st {};
    if (lstat(here.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      continue; // a missing name cannot lead anywhere; a real directory is inside
    }
    if (++hops > k_max_link_hops) {
      return false;
    }
    std::string next(PATH_MAX, '\0');
    auto length = readlink(here.c_str(), next.data(), next.size());
    if (length < 0) {
      return false;
    }
    next.resize(static_cast<std::size_t>(length));
    if (next.empty() || next.front() == '/') {
      return false;
    }
    start.pop_back();
    const auto parts = path_components(next);
    pending.insert(pending.begin(), parts.begin(), parts.end());
  }
  return true;
}

const char* special_type_name(mode_t type) {
  switch (type) {
  case AE_IFCHR:
    return "a character device";
  case AE_IFBLK:
    return "a block device";
  case AE_IFIFO:
    return "a FIFO";
  case AE_IFSOCK:
    return "a socket";
  default:
    return "of an unsupported type";
  }
}

struct ReaderDeleter {
  void operator()(struct archive* a) const { archive_read_free(a); }
};

/// Removes the temporary directory unless the extraction was committed.
class TemporaryTree {
public:
  explicit TemporaryTree(std::string path) : m_path(std::move(path)) {}
  ~TemporaryTree() {
    if (!m_committed) {
      std::error_code ec;
      fs::remove_all(m_path, ec);
    }
  }
  TemporaryTree(const TemporaryTree&) = delete;
  TemporaryTree& operator=(const TemporaryTree&) = delete;
  const std::string& path() const { return m_path; }
  void committed() { m_committed = true; }

private:
  std::string m_path;
  bool m_committed = false;
};

/// libarchive's explanation without the newline some of its messages end with (a message is
/// one line).
std::string libarchive_error(struct archive* a) {
  const char* text = archive_error_string(a);
  std::string message = text != nullptr ? text : "libarchive failed";
  while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back())) != 0) {
    message.pop_back();
  }
  return message;
}

class Extractor {
public:
  Extractor(std::string root, const ExtractLimits& limits, unsigned strip_components)
      : m_root(std::move(root)), m_limits(limits), m_strip(strip_components) {}

  Status entry(struct archive* a, archive_entry* header);
  Status check_all_links() const;

private:
  Status reject(const std::string& why) const {
    return Error(ErrorCategory::verification, "", why);
  }
  Status prepare_parents(const std::string& path, const std::vector<std::string>& parts) const;
  Status
  write_file(struct archive* a, const std::string& path, const std::string& disk_path, mode_t perm);
  Status hard_link(const std::string& path, const std::string& disk_path, const char* target) const;
  Status io_failure(const std::string& action, const std::string& path, int err) const {
    return Error(
        ErrorCategory::failure, "", "cannot " + action + " '" + path + "': " + std::strerror(err));
  }

  std::string m_root;
  ExtractLimits m_limits;
  unsigned m_strip = 0;
  std::size_t m_entries = 0;
  std::uint64_t m_total = 0;
};

Status Extractor::prepare_parents(const std::string& path,
                                  const std::vector<std::string>& parts) const {
  for (std::size_t depth = 1; depth < parts.size(); ++depth) {
    auto disk = under(m_root, parts, depth);
    auto shown = normalize_relative_path(under(".", parts, depth));
    struct stat st {};
    if (lstat(disk.c_str(), &st) != 0) {
      if (mkdir(disk.c_str(), 0755) != 0) {
        return io_failure("create directory", shown, errno);
      }
      continue;
    }
    if (S_ISLNK(st.st_mode)) {
      return reject("entry '" + path + "' goes through the symbolic link '" + shown + "'");
    }
    if (!S_ISDIR(st.st_mode)) {
      return reject("entry '" + path + "' is inside '" + shown + "', which is not a directory");
    }
  }
  return ok_status();
}

Status Extractor::write_file(struct archive* a,
                             const std::string& path,
                             const std::string& disk_path,
                             mode_t perm) {
  int fd = open(disk_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, perm);
  if (fd < 0) {
    return io_failure("create", path, errno);
  }
  std::unique_ptr<int, void (*)(int*)> closer(&fd, [](int* f) { close(*f); });
  std::string buffer(k_block, '\0');
  std::uint64_t size = 0;
  for (;;) {
    la_ssize_t got = archive_read_data(a, buffer.data(), buffer.size());
    if (got < 0) {
      return reject("entry '" + path + "' cannot be read: " + libarchive_error(a));
    }
    if (got == 0) {
      break;
    }
    size += static_cast<std::uint64_t>(got);
    m_total += static_cast<std::uint64_t>(got);
    if (size > m_limits.max_entry_bytes) {
      return reject("entry '" + path + "' is larger than the limit of " +
                    std::to_string(m_limits.max_entry_bytes) + " bytes per entry");
    }
    if (m_total > m_limits.max_total_bytes) {
      return reject("the entries total more than the limit of " +
                    std::to_string(m_limits.max_total_bytes) + " bytes");
    }
    if (const int err =
            write_all(fd, std::string_view(buffer.data(), static_cast<std::size_t>(got)))) {
      return io_failure("write", path, err);
    }
  }
  // The umask may have narrowed the mode given to open().
  if (fchmod(fd, perm) != 0) {
    return io_failure("set the mode of", path, errno);
  }
  return ok_status();
}

Status Extractor::hard_link(const std::string& path,
                            const std::string& disk_path,
                            const char* target) const {
  std::string shown_target = target;
  if (relative_path_problem(shown_target)) {
    return reject("hard link '" + path + "' -> '" + shown_target + "' leaves the destination");
  }
  auto parts = path_components(shown_target);
  if (parts.size() <= m_strip) {
    return reject("hard link '" + path + "' -> '" + shown_target +
                  "' names no file extracted before it");
  }
  parts.erase(parts.begin(), parts.begin() + m_strip);
  bool inside_real_directories = !parts.empty();
  for (std::size_t depth = 1; depth < parts.size() && inside_real_directories; ++depth) {
    struct stat st {};
    auto disk = under(m_root, parts, depth);
    inside_real_directories = lstat(disk.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  }
  struct stat st {};
  auto disk_target = under(m_root, parts, parts.size());
  if (!inside_real_directories || lstat(disk_target.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return reject("hard link '" + path + "' -> '" + shown_target +
                  "' names no file extracted before it");
  }
  if (link(disk_target.c_str(), disk_path.c_str()) != 0) {
    return io_failure("create hard link", path, errno);
  }
  return ok_status();
}

Status Extractor::entry(struct archive* a, archive_entry* header) {
  if (++m_entries > m_limits.max_entries) {
    return reject("the archive has more than the limit of " + std::to_string(m_limits.max_entries) +
                  " entries");
  }
  const char* raw = archive_entry_pathname(header);
  if (raw == nullptr) {
    return reject("an entry has no readable path");
  }
  std::string path = raw;
  if (auto problem = relative_path_problem(path)) {
    return reject("entry '" + path + "' " + describe(*problem));
  }
  auto parts = path_components(path);
  const mode_t type = archive_entry_filetype(header);
  const char* hardlink = archive_entry_hardlink(header);
  if (parts.empty()) {
    if (type == AE_IFDIR) {
      return ok_status(); // "./" itself
    }
    return reject("entry '" + path + "' names the destination itself");
  }
  if (parts.size() <= m_strip) {
    if (type == AE_IFDIR && hardlink == nullptr) {
      return ok_status(); // the top folder that strip_components drops
    }
    return reject("entry '" + path + "' has no path left after stripping " +
                  plural(m_strip, "leading path component"));
  }
  parts.erase(parts.begin(), parts.begin() + m_strip);
  if (hardlink == nullptr && type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) {
    return reject("entry '" + path + "' is " + special_type_name(type) +
                  "; only files, directories and links are allowed");
  }
  if (archive_entry_size_is_set(header) && archive_entry_size(header) >= 0 &&
      static_cast<std::uint64_t>(archive_entry_size(header)) > m_limits.max_entry_bytes) {
    return reject("entry '" + path + "' is larger than the limit of " +
                  std::to_string(m_limits.max_entry_bytes) + " bytes per entry");
  }
  if (auto status = prepare_parents(path, parts); !status) {
    return status;
  }
  const auto disk_path = under(m_root, parts, parts.size());
  struct stat existing {};
  if (lstat(disk_path.c_str(), &existing) == 0) {
    if (type == AE_IFDIR && hardlink == nullptr && S_ISDIR(existing.st_mode)) {
      return ok_status(); // a directory named again, e.g. after an entry inside it
    }
    return reject("entry '" + path + "' appears twice");
  }
  if (hardlink != nullptr) {
    return hard_link(path, disk_path, hardlink);
  }
  const mode_t perm = (archive_entry_perm(header) & 0755) | 0600;
  switch (type) {
  case AE_IFDIR:
    if (mkdir(disk_path.c_str(), 0700) != 0 || chmod(disk_path.c_str(), perm | 0700) != 0) {
      return io_failure("create directory", path, errno);
    }
    return ok_status();
  case AE_IFLNK: {
    const char* target = archive_entry_symlink(header);
    std::string shown_target = target != nullptr ? target : "";
    std::vector<std::string> start(parts.begin(), parts.end() - 1);
    if (!link_stays_inside(m_root, start, shown_target)) {
      return reject("symbolic link '" + path + "' -> '" + shown_target +
                    "' leaves the destination");
    }
    if (symlink(shown_target.c_str(), disk_path.c_str()) != 0) {
      return io_failure("create symbolic link", path, errno);
    }
    return ok_status();
  }
  default:
    return write_file(a, path, disk_path, perm);
  }
}

Status Extractor::check_all_links() const {
  // A link may pass when written and escape once a link it passes through is added later.
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(m_root, ec);
       !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_symlink()) {
      continue;
    }
    auto relative = it->path().lexically_relative(m_root).generic_string();
    auto parts = path_components(relative);
    std::vector<std::string> start(parts.begin(), parts.end() - 1);
    auto target = fs::read_symlink(it->path(), ec).string();
    if (ec || !link_stays_inside(m_root, start, target)) {
      return reject("symbolic link '" + relative + "' -> '" + target + "' leaves the destination");
    }
  }
  if (ec) {
    return io_failure("list", m_root, ec.value());
  }
  return ok_status();
}

} // namespace

Status safe_extract(const std::string& archive_path,
                    const std::string& destination,
                    const ExtractLimits& limits,
                    const ExtractOptions& options) {
  const std::string what = "cannot extract '" + archive_path + "'";
  auto fail = [&](const Error& error) {
    return Error(error.category(), what, error.why(), error.hint());
  };
  if (path_exists(destination)) {
    return Error(
        ErrorCategory::failure, what, "the destination '" + destination + "' already exists");
  }
  std::string pattern = destination + ".partial.XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return Error(ErrorCategory::failure,
                 what,
                 "cannot create a directory beside '" + destination + "': " + std::strerror(errno));
  }
  TemporaryTree tree(pattern);

  std::unique_ptr<struct archive, ReaderDeleter> a(archive_read_new());
  // Only in-library decompressors: filter_all would also accept formats that run external programs.
  if (options.format == ArchiveFormat::zip) {
    archive_read_support_format_zip(a.get());
  } else {
    archive_read_support_filter_gzip(a.get());
    archive_read_support_filter_bzip2(a.get());
    archive_read_support_filter_xz(a.get());
    archive_read_support_filter_zstd(a.get());
    archive_read_support_format_tar(a.get());
  }
  if (archive_read_open_filename(a.get(), archive_path.c_str(), k_block) != ARCHIVE_OK) {
    return Error(ErrorCategory::failure, what, libarchive_error(a.get()));
  }
  Extractor extractor(tree.path(), limits, options.strip_components);
  for (;;) {
    archive_entry* header = nullptr;
    int rc = archive_read_next_header(a.get(), &header);
    if (rc == ARCHIVE_EOF) {
      break;
    }
    if (rc < ARCHIVE_WARN) {
      return Error(ErrorCategory::verification,
                   what,
                   "the archive is damaged: " + libarchive_error(a.get()));
    }
    if (auto status = extractor.entry(a.get(), header); !status) {
      return fail(status.error());
    }
  }
  if (auto status = extractor.check_all_links(); !status) {
    return fail(status.error());
  }
  // mkdtemp made the directory private; the result is an ordinary directory.
  if (chmod(tree.path().c_str(), 0755) != 0 ||
      rename(tree.path().c_str(), destination.c_str()) != 0) {
    return Error(ErrorCategory::failure,
                 what,
                 "cannot rename into '" + destination + "': " + std::strerror(errno));
  }
  tree.committed();
  return ok_status();
}

} // namespace lume_unlock::util

#include "fetch/fetch.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace lume_unlock::fetch {

namespace {

namespace fs = std::filesystem;

struct FormatName {
  UnpackFormat format;
  const char* name;
};
constexpr FormatName k_formats[] = {
    {UnpackFormat::zip, "zip"}, {UnpackFormat::tar_gz, "tar.gz"}, {UnpackFormat::none, "none"}};

Error io_error(const std::string& what, const std::string& action, int err) {
  return Error(ErrorCategory::failure, what, "cannot " + action + ": " + std::strerror(err));
}

/// The single file of UnpackFormat::none, placed as <staging_dir>/<file name>, whole or not at all.
Status place_single_file(const std::string& what,
                         const std::string& blob_path,
                         const std::string& staging_dir) {
  struct stat st {};
  if (stat(blob_path.c_str(), &st) != 0) {
    return io_error(what, "read it", errno);
  }
  if (!S_ISREG(st.st_mode)) {
    return Error(ErrorCategory::failure, what, "it is not a regular file");
  }
  if (lstat(staging_dir.c_str(), &st) == 0) {
    return Error(
        ErrorCategory::failure, what, "the staging directory '" + staging_dir + "' already exists");
  }
  std::string temporary = staging_dir + ".partial.XXXXXX";
  if (mkdtemp(temporary.data()) == nullptr) {
    return io_error(what, "create a directory beside '" + staging_dir + "'", errno);
  }
  const auto name = fs::path(blob_path).filename().string();
  const auto placed = temporary + "/" + name;
  Status status = ok_status();
  std::error_code ec;
  // A hard link, or a copy with the blob's mode when a link cannot cross file systems.
  if (link(blob_path.c_str(), placed.c_str()) != 0) {
    fs::copy_file(blob_path, placed, fs::copy_options::none, ec);
    if (ec) {
      status = io_error(what, "copy it to '" + placed + "'", ec.value());
    } else if (chmod(placed.c_str(), st.st_mode & 0755) != 0) {
      status = io_error(what, "set the mode of '" + placed + "'", errno);
    }
  }
  if (status && (chmod(temporary.c_str(), 0755) != 0 ||
                 rename(temporary.c_str(), staging_dir.c_str()) != 0)) {
    status = io_error(what, "rename into '" + staging_dir + "'", errno);
  }
  if (!status) {
    fs::remove_all(temporary, ec);
  }
  return status;
}

/// `known_sha256`: the digest of every regular file in the tree when the caller already checked
/// it (a single cached blob), so it is not read again; empty: each file is hashed.
Result<std::vector<UnpackedFile>>
list_tree(const std::string& what, const std::string& root, const std::string& known_sha256 = {}) {
  std::vector<UnpackedFile> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const auto status = it->symlink_status(ec);
    if (ec) {
      break;
    }
    if (!fs::is_regular_file(status) && !fs::is_symlink(status)) {
      continue; // directories are implied by the files in them
    }
    UnpackedFile file;
    file.host_path = it->path().string();
    file.relative_path = it->path().lexically_relative(root).generic_string();
    if (fs::is_symlink(status)) {
      file.symlink_target = fs::read_symlink(it->path(), ec).string();
      if (ec) {
        break;
      }
    } else {
      if (known_sha256.empty()) {
        LUME_UNLOCK_TRY_ASSIGN(file.sha256, util::sha256_file_hex(file.host_path));
      } else {
        file.sha256 = known_sha256;
      }
      file.size = static_cast<std::uint64_t>(fs::file_size(it->path(), ec));
      file.executable = (status.permissions() & fs::perms::owner_exec) != fs::perms::none;
    }
    files.push_back(std::move(file));
  }
  if (ec) {
    return io_error(what, "list '" + root + "'", ec.value());
  }
  std::sort(files.begin(), files.end(), [](const UnpackedFile& a, const UnpackedFile& b) {
    return a.relative_path < b.relative_path;
  });
  return files;
}

} // namespace

Result<UnpackFormat> parse_unpack_format(std::string_view text) {
  std::vector<std::string> names;
  for (const auto& entry : k_formats) {
    if (text == entry.name) {
      return entry.format;
    }
    names.emplace_back(entry.name);
  }
  std::string hint;
  if (auto close = util::closest_match(text, names)) {
    hint = "did you mean '" + *close + "'?";
  }
  return Error(ErrorCategory::usage,
               "",
               util::quote_for_message(text) + " is not an unpack format; use zip, tar.gz or none",
               hint);
}

const char* format_name(UnpackFormat format) {
  for (const auto& entry : k_formats) {
    if (entry.format == format) {
      return entry.name;
    }
  }
  return "none";
}

Result<std::vector<UnpackedFile>> unpack_artifact(const std::string& blob_path,
                                                  UnpackFormat format,
                                                  unsigned strip_components,
                                                  const std::string& staging_dir,
                                                  const util::ExtractLimits& limits,
                                                  const std::string& known_sha256) {
  const std::string what = "cannot unpack '" + blob_path + "'";
  if (format == UnpackFormat::none) {
    if (strip_components != 0) {
      return Error(ErrorCategory::usage,
                   what,
                   "strip_components applies to archives only, and unpack is none",
                   "drop strip_components, or set unpack to zip or tar.gz");
    }
    LUME_UNLOCK_TRY(place_single_file(what, blob_path, staging_dir));
    LUME_UNLOCK_TRY_ASSIGN(auto files, list_tree(what, staging_dir, known_sha256));
    for (auto& file : files) {
      file.relative_path.clear(); // the one file is the destination itself
    }
    return files;
  }
  util::ExtractOptions options;
  options.format =
      format == UnpackFormat::zip ? util::ArchiveFormat::zip : util::ArchiveFormat::tar;
  options.strip_components = strip_components;
  LUME_UNLOCK_TRY(util::safe_extract(blob_path, staging_dir, limits, options));
  return list_tree(what, staging_dir);
}

} // namespace lume_unlock::fetch

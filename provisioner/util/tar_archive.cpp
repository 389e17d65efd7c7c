#include "util/archive.hpp"
#include "util/atomic_file.hpp"
#include "util/text.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <vector>

namespace lume_unlock::util {

namespace {

constexpr const char* k_what = "cannot write archive";
constexpr std::size_t k_block = 1 << 16;

Error archive_error(const std::string& why) {
  return Error(ErrorCategory::failure, k_what, why);
}

mode_t normalized_mode(TarEntry::Kind kind, mode_t mode) {
  if (kind == TarEntry::Kind::directory || (mode & 0111) != 0) {
    return 0755;
  }
  return 0644;
}

/// What the writer holds for one path after validation.
struct Planned {
  TarEntry::Kind kind;
  const TarEntry* entry = nullptr; ///< null for an implied parent directory
};

/// Validates the paths, adds implied parent directories and orders everything by path.
Result<std::map<std::string, Planned>> plan(const std::vector<TarEntry>& entries) {
  std::map<std::string, Planned> planned;
  auto used_as_directory = [](const std::string& path) {
    return archive_error("entry '" + path + "' is a file but other entries are inside it");
  };
  for (const auto& entry : entries) {
    if (auto problem = relative_path_problem(entry.path)) {
      return archive_error("entry '" + entry.path + "' " + describe(*problem));
    }
    auto path = normalize_relative_path(entry.path);
    if (path.empty()) {
      return archive_error("entry '" + entry.path + "' names the archive root");
    }
    auto found = planned.find(path);
    if (found == planned.end()) {
      planned.emplace(path, Planned{entry.kind, &entry});
    } else if (found->second.entry != nullptr) {
      return archive_error("entry '" + path + "' is given twice");
    } else if (entry.kind == TarEntry::Kind::file) {
      return used_as_directory(path); // an earlier entry implied a directory here
    } else {
      found->second.entry = &entry;
    }
    for (auto slash = path.find('/'); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      auto parent = path.substr(0, slash);
      auto existing = planned.find(parent);
      if (existing == planned.end()) {
        planned.emplace(parent, Planned{TarEntry::Kind::directory, nullptr});
      } else if (existing->second.kind != TarEntry::Kind::directory) {
        return used_as_directory(parent);
      }
    }
  }
  return planned;
}

struct ArchiveDeleter {
  void operator()(struct archive* a) const { archive_write_free(a); }
};
struct EntryDeleter {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

/// libarchive calls this with compressed bytes; a sink failure is kept and reported after.
struct SinkState {
  const ByteSink* sink;
  std::optional<Error> failure;
};

la_ssize_t write_callback(struct archive*, void* client, const void* buffer, size_t length) {
  auto* state = static_cast<SinkState*>(client);
  auto status = (*state->sink)(std::string_view(static_cast<const char*>(buffer), length));
  if (!status.ok()) {
    state->failure = status.error();
    return -1;
  }
  return static_cast<la_ssize_t>(length);
}

Status
libarchive_status(struct archive* a, int rc, const SinkState& state, const std::string& doing) {
  if (rc >= ARCHIVE_WARN) {
    return ok_status();
  }
  if (state.failure) {
    return *state.failure;
  }
  const char* text = archive_error_string(a);
  return archive_error(doing + ": " + (text != nullptr ? text : "libarchive failed"));
}

Status write_data(struct archive* a,
                  const std::string& path,
                  std::string_view bytes,
                  const SinkState& state) {
  while (!bytes.empty()) {
    auto chunk = bytes.substr(0, k_block);
    la_ssize_t written = archive_write_data(a, chunk.data(), chunk.size());
    if (written < 0) {
      return libarchive_status(a, ARCHIVE_FATAL, state, "writing '" + path + "'");
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return ok_status();
}

/// Size, mode and content source of a file entry, checked before its header is written.
struct FileFacts {
  std::int64_t size = 0;
  mode_t mode = 0644;
};

Result<FileFacts> file_facts(const TarEntry& entry) {
  if (entry.source_path.empty()) {
    return FileFacts{static_cast<std::int64_t>(entry.content.size()), entry.mode.value_or(0644)};
  }
  struct stat st {};
  if (stat(entry.source_path.c_str(), &st) != 0) {
    return archive_error("cannot read '" + entry.source_path + "': " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return archive_error("'" + entry.source_path + "' is not a regular file");
  }
  return FileFacts{static_cast<std::int64_t>(st.st_size), entry.mode.value_or(st.st_mode)};
}

Status copy_source(struct archive* a,
                   const std::string& path,
                   const TarEntry& entry,
                   std::int64_t expected,
                   const SinkState& state) {
  std::ifstream in(entry.source_path, std::ios::binary);
  if (!in) {
    return archive_error("cannot read '" + entry.source_path + "': " + std::strerror(errno));
  }
  std::string buffer(k_block, '\0');
  std::int64_t copied = 0;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) {
      break;
    }
    copied += static_cast<std::int64_t>(got);
    if (copied > expected) {
      break;
    }
    if (auto status = write_data(a, path, std::string_view(buffer.data(), got), state); !status) {
      return status;
    }
  }
  if (in.bad()) {
    return archive_error("cannot read '" + entry.source_path + "': " + std::strerror(errno));
  }
  if (copied != expected) {
    // The header already holds the size; a file that changed meanwhile would corrupt the archive.
    return archive_error("'" + entry.source_path + "' changed size while being archived");
  }
  return ok_status();
}

} // namespace

std::optional<PathProblem> relative_path_problem(std::string_view path) {
  if (path.empty()) {
    return PathProblem::empty;
  }
  if (path.find('\0') != std::string_view::npos) {
    return PathProblem::nul_byte;
  }
  if (path.front() == '/') {
    return PathProblem::absolute;
  }
  const auto parts = path_components(path);
  if (std::find(parts.begin(), parts.end(), "..") != parts.end()) {
    return PathProblem::parent_component;
  }
  return std::nullopt;
}

const char* describe(PathProblem problem) {
  switch (problem) {
  case PathProblem::empty:
    return "is empty";
  case PathProblem::absolute:
    return "is an absolute path";
  case PathProblem::parent_component:
    return "contains a '..' component";
  case PathProblem::nul_byte:
    return "contains a NUL byte";
  }
  return "is not a safe relative path";
}

std::vector<std::string> path_components(std::string_view path) {
  std::vector<std::string> parts;
  while (!path.empty()) {
    const auto slash = path.find('/');
    const auto part = path.substr(0, slash);
    if (!part.empty() && part != ".") {
      parts.emplace_back(part);
    }
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
  }
  return parts;
}

std::string normalize_relative_path(std::string_view path) {
  return join(path_components(path), "/");
}

TarEntry TarEntry::bytes(std::string path, std::string content, mode_t mode) {
  TarEntry entry;
  entry.path = std::move(path);
  entry.content = std::move(content);
  entry.mode = mode;
  return entry;
}

TarEntry TarEntry::file(std::string path, std::string source_path) {
  TarEntry entry;
  entry.path = std::move(path);
  entry.source_path = std::move(source_path);
  return entry;
}

TarEntry TarEntry::directory(std::string path) {
  TarEntry entry;
  entry.path = std::move(path);
  entry.kind = Kind::directory;
  return entry;
}

Status write_tar_gz(std::vector<TarEntry> entries, const ByteSink& sink) {
  LUME_UNLOCK_TRY_ASSIGN(auto planned, plan(entries));
  std::unique_ptr<struct archive, ArchiveDeleter> a(archive_write_new());
  SinkState state{&sink, std::nullopt};
  // pax_restricted writes plain ustar headers and adds a pax header only for what ustar cannot
  // hold (long names); "!timestamp" keeps the build time out of the gzip header.
  int rc = archive_write_set_format_pax_restricted(a.get());
  if (rc == ARCHIVE_OK) {
    rc = archive_write_add_filter_gzip(a.get());
  }
  if (rc == ARCHIVE_OK) {
    rc = archive_write_set_options(a.get(), "gzip:!timestamp");
  }
  if (rc == ARCHIVE_OK) {
    rc = archive_write_set_bytes_in_last_block(a.get(), 1);
  }
  if (rc == ARCHIVE_OK) {
    rc = archive_write_open2(a.get(), &state, nullptr, write_callback, nullptr, nullptr);
  }
  if (auto status = libarchive_status(a.get(), rc, state, "setting up gzip'd tar"); !status) {
    return status;
  }

  std::unique_ptr<archive_entry, EntryDeleter> header(archive_entry_new());
  for (const auto& [path, item] : planned) {
    archive_entry_clear(header.get());
    archive_entry_set_pathname(header.get(), path.c_str());
    archive_entry_set_mtime(header.get(), 0, 0);
    archive_entry_set_uid(header.get(), 0);
    archive_entry_set_gid(header.get(), 0);
    FileFacts facts;
    if (item.kind == TarEntry::Kind::directory) {
      archive_entry_set_filetype(header.get(), AE_IFDIR);
      facts.mode = 0755;
    } else {
      LUME_UNLOCK_TRY_ASSIGN(auto got, file_facts(*item.entry));
      facts = got;
      archive_entry_set_filetype(header.get(), AE_IFREG);
    }
    archive_entry_set_perm(header.get(), normalized_mode(item.kind, facts.mode));
    archive_entry_set_size(header.get(), facts.size);
    rc = archive_write_header(a.get(), header.get());
    if (auto status = libarchive_status(a.get(), rc, state, "writing header of '" + path + "'");
        !status) {
      return status;
    }
    if (item.kind == TarEntry::Kind::file) {
      auto status = item.entry->source_path.empty()
                        ? write_data(a.get(), path, item.entry->content, state)
                        : copy_source(a.get(), path, *item.entry, facts.size, state);
      if (!status) {
        return status;
      }
    }
  }
  rc = archive_write_close(a.get());
  return libarchive_status(a.get(), rc, state, "finishing the archive");
}

Result<std::string> tar_gz_bytes(std::vector<TarEntry> entries) {
  std::string bytes;
  ByteSink sink = [&bytes](std::string_view chunk) {
    bytes.append(chunk);
    return ok_status();
  };
  LUME_UNLOCK_TRY(write_tar_gz(std::move(entries), sink));
  return bytes;
}

Status write_tar_gz_file(const std::string& path, std::vector<TarEntry> entries) {
  LUME_UNLOCK_TRY_ASSIGN(AtomicFile file, AtomicFile::create(path, 0644));
  ByteSink sink = [&file](std::string_view chunk) { return file.write(chunk); };
  if (auto status = write_tar_gz(std::move(entries), sink); !status) {
    const auto& error = status.error();
    return Error(error.category(), std::string(k_what) + " '" + path + "'", error.why());
  }
  return file.commit();
}

} // namespace lume_unlock::util

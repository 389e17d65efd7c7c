#include "apply/artifact_stage.hpp"

#include "apply/programs.hpp"
#include "fetch/fetch.hpp"
#include "macho/macho.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <algorithm>
#include <filesystem>

namespace lume_unlock::apply {

namespace fs = std::filesystem;

namespace {

fetch::FetchRequest fetch_request(const recipe::Recipe& recipe,
                                  const recipe::InstallItem& item,
                                  const std::optional<std::string>& sha256) {
  fetch::FetchRequest request;
  request.source = recipe::install_source(recipe, item);
  request.sha256 = sha256;
  request.label = item.label();
  return request;
}

/// Fetches `item` (pinned to `sha256` when known) and unpacks it into <staging>/<index>.
Result<std::pair<fetch::FetchedArtifact, std::vector<fetch::UnpackedFile>>>
fetch_and_unpack(const recipe::Recipe& recipe,
                 std::size_t index,
                 const std::optional<std::string>& sha256,
                 fetch::BlobCache& cache,
                 const fetch::FetchServices& services,
                 const StagingArea& staging) {
  const recipe::InstallItem& item = recipe.install[index];
  auto fetched = fetch::fetch_artifact(fetch_request(recipe, item, sha256), cache, services);
  if (!fetched.ok()) {
    return fetched.error().with_context(item.field);
  }
  auto files = fetch::unpack_artifact(fetched.value().path,
                                      item.unpack,
                                      item.strip_components,
                                      staging.path() + "/" + std::to_string(index),
                                      {},
                                      fetched.value().sha256);
  if (!files.ok()) {
    return files.error().with_context(item.field);
  }
  return std::make_pair(std::move(fetched).value(), std::move(files).value());
}

/// The item's `files:` pins against the unpacked tree: a file missing, a link where a file is
/// pinned, or other bytes is a registry error (exit 4, as a blob's mismatch is) naming both
/// digests.
Status check_pinned_files(const recipe::InstallItem& item,
                          const std::string& source,
                          const std::vector<fetch::UnpackedFile>& files) {
  for (const auto& [path, want] : item.file_sha256) {
    const auto found = std::find_if(
        files.begin(), files.end(), [&](const auto& file) { return file.relative_path == path; });
    const std::string what = item.field + ".files." + path + " (" + source + ")";
    const std::string hint = "this is not the build the recipe pins: check the item's url, or "
                             "the digest against the publisher's; nothing was sent to the guest";
    if (found == files.end()) {
      return Error(ErrorCategory::registry, what, "the archive holds no such file", hint);
    }
    if (!found->symlink_target.empty()) {
      return Error(ErrorCategory::registry,
                   what,
                   "it is a link to " + util::quote_for_message(found->symlink_target) +
                       ", not a file: pin the file it points to",
                   hint);
    }
    if (found->sha256 != want) {
      return Error(ErrorCategory::registry,
                   what,
                   "its SHA-256 is " + found->sha256 + ", the recipe pins " + want,
                   hint);
    }
  }
  return ok_status();
}

} // namespace

ArtifactPin pin_of(const recipe::InstallItem& item, const recipe::LockFile* lock) {
  if (item.sha256) {
    return {item.sha256, false};
  }
  if (lock != nullptr) {
    if (const auto* locked = lock->find_artifact(item.field)) {
      return {locked->sha256, true};
    }
  }
  return {};
}

Result<StagingArea> StagingArea::create(const fetch::BlobCache& cache) {
  const std::string path = cache.root() + "/staging/" + util::random_hex(16);
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) {
    return Error(ErrorCategory::failure,
                 "creating the staging directory '" + path + "'",
                 ec.message(),
                 "check that the cache directory is writable (LUME_UNLOCK_CACHE_DIR chooses it)");
  }
  return StagingArea(path);
}

StagingArea::StagingArea(StagingArea&& other) noexcept : m_path(std::move(other.m_path)) {
  other.m_path.clear();
}

StagingArea::~StagingArea() {
  if (!m_path.empty()) {
    std::error_code ignored;
    fs::remove_all(m_path, ignored);
  }
}

Result<std::vector<StagedArtifact>> stage_artifacts(const recipe::Recipe& recipe,
                                                    const recipe::LockFile* lock,
                                                    fetch::BlobCache& cache,
                                                    const fetch::FetchServices& services,
                                                    const StagingArea& staging) {
  std::vector<StagedArtifact> staged;
  for (std::size_t i = 0; i < recipe.install.size(); ++i) {
    const recipe::InstallItem& item = recipe.install[i];
    const ArtifactPin pin = pin_of(item, lock);
    LUME_UNLOCK_TRY_ASSIGN(auto unpacked,
                           fetch_and_unpack(recipe, i, pin.sha256, cache, services, staging));
    const std::string source = fetch::describe(recipe::install_source(recipe, item));
    LUME_UNLOCK_TRY(check_pinned_files(item, source, unpacked.second));
    staged.push_back(StagedArtifact{item,
                                    source,
                                    std::move(unpacked.first),
                                    pin.sha256.has_value(),
                                    std::move(unpacked.second)});
  }
  return staged;
}

namespace {

/// A file (not an archive: lock checks nothing inside) whose publisher advertises its digest is
/// pinned from one HEAD; the bytes are verified against the pin when create fetches them.
Result<std::optional<recipe::LockedArtifact>>
lock_from_advertisement(const recipe::InstallItem& item,
                        const fetch::FetchRequest& request,
                        const fetch::FetchServices& services) {
  if (item.unpack != fetch::UnpackFormat::none) {
    return std::optional<recipe::LockedArtifact>();
  }
  const auto advertised = fetch::advertised_digest(request.source, services);
  if (!advertised) {
    return std::optional<recipe::LockedArtifact>();
  }
  const std::string source = fetch::describe(request.source);
  if (request.sha256 && *request.sha256 != advertised->sha256) {
    return Error(ErrorCategory::registry,
                 item.field + " (" + source + ")",
                 "the publisher advertises sha256:" + advertised->sha256 +
                     " (X-Linked-Etag), the recipe pins sha256:" + *request.sha256,
                 "the file at this URL is not the one the recipe pins: check the url's "
                 "revision, or the digest against the publisher's; nothing was downloaded");
  }
  if (services.progress) {
    util::ProgressEvent event;
    event.step = request.label;
    event.done = advertised->size;
    event.total = advertised->size;
    event.unit = "bytes";
    event.detail = "pinned from the publisher's X-Linked-Etag, not downloaded";
    event.finished = true;
    services.progress(event);
  }
  return std::optional<recipe::LockedArtifact>(
      recipe::LockedArtifact{item.field, source, advertised->sha256, advertised->size});
}

} // namespace

Result<std::vector<recipe::LockedArtifact>> lock_artifacts(const recipe::Recipe& recipe,
                                                           fetch::BlobCache& cache,
                                                           const fetch::FetchServices& services) {
  std::vector<recipe::LockedArtifact> locked;
  for (const recipe::InstallItem& item : recipe.install) {
    const fetch::FetchRequest request = fetch_request(recipe, item, item.sha256);
    LUME_UNLOCK_TRY_ASSIGN(auto advertised, lock_from_advertisement(item, request, services));
    if (advertised) {
      locked.push_back(*advertised);
      continue;
    }
    auto fetched = fetch::fetch_artifact(request, cache, services);
    if (!fetched.ok()) {
      return fetched.error().with_context(item.field);
    }
    locked.push_back(recipe::LockedArtifact{
        item.field, fetch::describe(request.source), fetched.value().sha256, fetched.value().size});
  }
  return locked;
}

namespace {

/// The load check of one unpacked file `path` of `item`: a line, or the refusal.
Result<std::optional<std::string>> check_pinned_program(const recipe::InstallItem& item,
                                                        const std::string& path,
                                                        const std::string& host_path,
                                                        const std::string& guest_macos) {
  LUME_UNLOCK_TRY_ASSIGN(auto image, read_host_program(host_path));
  const macho::Slice* slice = image.find("arm64");
  const std::string what = item.field + ".files." + path;
  if (slice == nullptr) {
    return std::optional<std::string>(); // not a Mach-O, or no slice an Apple-silicon guest runs
  }
  const macho::Verdict verdict =
      macho::judge_program(image, {"darwin-arm64", {"arm64"}, true}, guest_macos);
  if (verdict.kind == macho::VerdictKind::needs_newer_macos) {
    return Error(ErrorCategory::verification,
                 what + " (" + item.label() + ")",
                 verdict.why + " (source.macos)",
                 verdict.fix + "; nothing was locked");
  }
  return std::optional<std::string>(
      what + ": arm64 slice built for macOS " +
      (slice->min_macos ? macho::format_version(*slice->min_macos) : "(not named)") +
      ", loads on macOS " + guest_macos);
}

} // namespace

Result<std::vector<std::string>>
check_pinned_programs(const recipe::Recipe& recipe,
                      const std::vector<recipe::LockedArtifact>& locked,
                      fetch::BlobCache& cache,
                      const fetch::FetchServices& services,
                      const StagingArea& staging,
                      const std::string& guest_macos) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < recipe.install.size(); ++i) {
    const recipe::InstallItem& item = recipe.install[i];
    const auto pin = std::find_if(
        locked.begin(), locked.end(), [&](const auto& a) { return a.field == item.field; });
    if (item.unpack == fetch::UnpackFormat::none || item.file_sha256.empty() ||
        pin == locked.end()) {
      continue;
    }
    LUME_UNLOCK_TRY_ASSIGN(auto unpacked,
                           fetch_and_unpack(recipe, i, pin->sha256, cache, services, staging));
    const auto& files = unpacked.second;
    for (const auto& [path, sha256] : item.file_sha256) {
      const auto file = std::find_if(files.begin(), files.end(), [&](auto& f) {
        return f.relative_path == path && f.symlink_target.empty();
      });
      if (file == files.end()) {
        continue; // create's pin check (check_pinned_files) names what is missing
      }
      LUME_UNLOCK_TRY_ASSIGN(auto line,
                             check_pinned_program(item, path, file->host_path, guest_macos));
      if (line) {
        lines.push_back(*line);
      }
    }
  }
  return lines;
}

namespace {

/// "bin/llama-server, bin/llama-bench, … (and 41 more)": executables first, as a reader looks
/// for the program among them.
std::string describe_tree(const std::vector<fetch::UnpackedFile>& files) {
  std::vector<const fetch::UnpackedFile*> ordered;
  for (const auto& file : files) {
    ordered.push_back(&file);
  }
  // Programs first (what an enablement entry names), then other files, then links.
  const auto rank = [](const fetch::UnpackedFile* file) {
    const std::string& path = file->relative_path;
    const bool library = path.find(".dylib") != std::string::npos;
    return !file->symlink_target.empty() ? 2 : file->executable && !library ? 0 : 1;
  };
  std::stable_sort(ordered.begin(), ordered.end(), [&](const auto* a, const auto* b) {
    return rank(a) < rank(b);
  });
  constexpr std::size_t k_shown = 8;
  std::string text;
  for (std::size_t i = 0; i < ordered.size() && i < k_shown; ++i) {
    text += (i ? ", " : "") + util::quote_for_message(ordered[i]->relative_path);
  }
  if (ordered.size() > k_shown) {
    text += " (and " + std::to_string(ordered.size() - k_shown) + " more)";
  }
  return text.empty() ? "no files" : text;
}

} // namespace

Status check_enabled_programs(const std::vector<StagedArtifact>& staged,
                              const enablement::EnablementList& enablement) {
  for (const auto& entry : enablement.entries) {
    for (const auto& artifact : staged) {
      const std::string& dest = artifact.item.dest;
      if (artifact.item.unpack == fetch::UnpackFormat::none ||
          !util::starts_with(entry.program, dest + "/")) {
        continue;
      }
      const std::string relative = entry.program.substr(dest.size() + 1);
      const bool found =
          std::any_of(artifact.files.begin(), artifact.files.end(), [&](const auto& file) {
            return file.relative_path == relative;
          });
      if (found) {
        continue;
      }
      std::string hint = "fix the entry's program path, or the item's dest or strip_components";
      for (const auto& file : artifact.files) {
        const std::string& path = file.relative_path;
        if (util::ends_with(path, "/" + relative)) {
          hint = "the tree has it as " + util::quote_for_message(path) + ": set " +
                 artifact.item.field + ".strip_components to drop the leading folder";
          break;
        }
      }
      return Error(ErrorCategory::usage,
                   "enablement entry '" + entry.name + "'",
                   "program " + util::quote_for_message(entry.program) + " is not in " +
                       artifact.item.field + " (" + artifact.source + ", unpacked to " +
                       util::quote_for_message(dest) + "), which holds " +
                       describe_tree(artifact.files),
                   hint);
    }
  }
  return ok_status();
}

} // namespace lume_unlock::apply

#include "bundle/bundle.hpp"
#include "util/archive.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

namespace lume_unlock::bundle {

namespace {

namespace fs = std::filesystem;

constexpr const char* k_directory_name = "shim-bundle";
constexpr const char* k_shim_stem = "liblume-unlock-shim";
constexpr const char* k_probe_name = "lume-unlock-probe";

Error bad_spec(const std::string& why) {
  return Error(ErrorCategory::usage, "cannot build the shim bundle", why);
}

Error io_error(const std::string& why) {
  return Error(ErrorCategory::failure, "cannot build the shim bundle", why);
}

/// Removes a staging directory unless it was committed.
class Staging {
public:
  explicit Staging(std::string path) : m_path(std::move(path)) {}
  ~Staging() {
    if (!m_path.empty()) {
      std::error_code ignored;
      fs::remove_all(m_path, ignored);
    }
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  const std::string& path() const { return m_path; }
  void release() { m_path.clear(); }

private:
  std::string m_path;
};

/// Copies `source` to `<stage>/<relative>` with a normalized mode and returns its manifest entry.
Result<BundleFile>
copy_in(const std::string& source, const std::string& stage, const std::string& relative) {
  struct stat st {};
  if (stat(source.c_str(), &st) != 0) {
    return io_error("cannot read '" + source + "': " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return io_error("'" + source + "' is not a regular file");
  }
  auto content = util::read_file(source);
  if (!content) {
    return io_error(content.error().message());
  }
  const mode_t mode = (st.st_mode & 0111) != 0 ? 0755 : 0644;
  const std::string target = stage + "/" + relative;
  LUME_UNLOCK_TRY(util::make_directories(fs::path(target).parent_path().string()));
  LUME_UNLOCK_TRY(util::write_file_atomic(target, content.value(), mode));
  return BundleFile{relative, util::sha256_hex(content.value())};
}

Status check_spec(const BundleSpec& spec) {
  if (!is_bundle_version(spec.version)) {
    return bad_spec("version '" + spec.version +
                    "' may only hold letters, digits, '.', '_', '+' and '-'");
  }
  if (spec.platforms.empty()) {
    return bad_spec("no platform given");
  }
  std::set<std::string> names;
  for (const auto& platform : spec.platforms) {
    if (!is_platform_name(platform.name)) {
      return bad_spec("'" + platform.name + "' is not a platform name like 'darwin-arm64'");
    }
    if (!names.insert(platform.name).second) {
      return bad_spec("platform '" + platform.name + "' is given twice");
    }
    if (platform.inject_env != "LD_PRELOAD" && platform.inject_env != "DYLD_INSERT_LIBRARIES") {
      return bad_spec("platform '" + platform.name + "': injection variable '" +
                      platform.inject_env +
                      "' is neither 'DYLD_INSERT_LIBRARIES' nor 'LD_PRELOAD'");
    }
    if (platform.shim.empty()) {
      return bad_spec("platform '" + platform.name + "' has no shim");
    }
  }
  return ok_status();
}

} // namespace

Result<BuiltBundle> build_bundle(const BundleSpec& spec, const std::string& out) {
  LUME_UNLOCK_TRY(check_spec(spec));
  LUME_UNLOCK_TRY(util::make_directories(out));
  const std::string final_path = out + "/" + k_directory_name;
  std::string pattern = final_path + ".partial.XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return io_error("cannot create a directory in '" + out + "': " + std::strerror(errno));
  }
  chmod(pattern.c_str(), 0755); // mkdtemp's 0700 would make the bundle private
  Staging staging(pattern);

  BundleManifest manifest;
  manifest.version = spec.version;
  manifest.source_revision = spec.source_revision;
  for (const auto& platform : spec.platforms) {
    PlatformEntry entry;
    entry.inject_env = platform.inject_env;
    std::set<std::string> used;
    auto add = [&](const std::string& source, const std::string& name) -> Result<BundleFile> {
      if (!used.insert(name).second) {
        return bad_spec("platform '" + platform.name + "' has two files named '" + name + "'");
      }
      return copy_in(source, staging.path(), platform.name + "/" + name);
    };
    LUME_UNLOCK_TRY_ASSIGN(
        auto shim, add(platform.shim, k_shim_stem + fs::path(platform.shim).extension().string()));
    entry.shim = shim;
    entry.shim.slices = platform.shim_slices;
    if (!platform.probe) {
      return bad_spec("platform '" + platform.name +
                      "' has no probe (every platform entry needs a shim and a probe)");
    }
    LUME_UNLOCK_TRY_ASSIGN(auto probe, add(*platform.probe, k_probe_name));
    entry.probe = probe;
    entry.probe->slices = platform.probe_slices;
    for (const auto& source : platform.support) {
      LUME_UNLOCK_TRY_ASSIGN(auto file, add(source, fs::path(source).filename().string()));
      entry.support.push_back(file);
    }
    manifest.platforms.emplace(platform.name, entry);
  }

  const std::string manifest_text = render_bundle_manifest(manifest);
  // The loader's rules apply to what is written (slices that lack the platform's arch, …).
  if (auto parsed = parse_bundle_manifest(manifest_text); !parsed.ok()) {
    return bad_spec(parsed.error().why());
  }
  LUME_UNLOCK_TRY(util::write_file_atomic(staging.path() + "/" + k_manifest_name, manifest_text));
  std::vector<util::TarEntry> entries{util::TarEntry::bytes(k_manifest_name, manifest_text)};
  for (const auto& file : manifest.files()) {
    entries.push_back(util::TarEntry::file(file.path, staging.path() + "/" + file.path));
  }
  const std::string archive = out + "/lume-unlock-shim-bundle-" + spec.version + ".tar.gz";
  LUME_UNLOCK_TRY(util::write_tar_gz_file(archive, std::move(entries)));
  if (auto placed = util::replace_directory(staging.path(), final_path); !placed.ok()) {
    return io_error(placed.error().message());
  }
  staging.release();
  return BuiltBundle{final_path, archive, std::move(manifest)};
}

} // namespace lume_unlock::bundle

#pragma once

#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::provenance {

/// The provenance record of DESIGN §7. Every field whose value is not known stays empty and is
/// absent from the JSON: nothing is ever invented.
struct ImageInfo {
  std::optional<std::string> reference;
  std::optional<std::string> digest;               ///< the digest we resolved and verified
  std::optional<std::string> lume_manifest_digest; ///< what Lume wrote to .manifest-digest
  /// "sha256:<hex>" of the public key (DER) whose cosign signature vouched for `digest` before
  /// the pull; absent when the recipe demanded no signature (and in records made before).
  std::optional<std::string> signed_by;
};

struct HardwareInfo {
  std::optional<std::int64_t> cpu;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> disk_bytes;
};

struct GuestInfo {
  std::optional<std::string> os;
  std::optional<std::string> version;
  std::optional<std::string> build;
  std::optional<std::string> arch;
};

struct ShimProfile {
  std::optional<std::int64_t> apple_family_max;
  std::optional<std::int64_t> max_threadgroup_memory;
};

struct FileHash {
  std::string path;
  std::string sha256;
};

struct ShimInfo {
  std::optional<std::string> bundle_version;
  std::optional<std::string> platform;
  std::optional<ShimProfile> profile;
  std::optional<std::vector<FileHash>> files;
  /// The registry artifact the bundle came from ("registry/repository@sha256:…") and its
  /// manifest digest; absent for a bundle from a local directory or archive.
  std::optional<std::string> bundle_reference;
  std::optional<std::string> bundle_digest;
  /// The public key that vouched for the bundle artifact (as ImageInfo::signed_by).
  std::optional<std::string> bundle_signed_by;
  /// The recipe's shim.dylib, when an externally built dylib was installed as the shim (the
  /// first of `files`): the host path as the recipe wrote it and its SHA-256.
  std::optional<FileHash> external;
};

/// Where an enablement entry came from: the recipe of a `create`, or an `allow add`.
inline constexpr const char* k_origin_recipe = "recipe";
inline constexpr const char* k_origin_allow = "allow";

struct EnablementRecord {
  std::string name;
  std::optional<std::string> program; ///< as the user wrote it
  std::optional<bool> agent;
  std::optional<std::string> plist_sha256;
  /// k_origin_recipe or k_origin_allow. Records written before the field existed have none:
  /// their entries all came from a recipe (origin_of).
  std::optional<std::string> origin;
  /// The program's real path when it was applied (what the guard file lists); absent in records
  /// written before programs were resolved. `status` compares it with the program's realpath now.
  std::optional<std::string> resolved_program;
};

/// The origin of `record`: its own, or k_origin_recipe when it has none.
std::string origin_of(const EnablementRecord& record);

struct ProbeInfo {
  std::optional<nlohmann::json> stock;    ///< lume-unlock-probe --json, without the shim
  std::optional<nlohmann::json> unlocked; ///< with the shim
};

struct RecipeInfo {
  std::optional<std::string> path;
  std::optional<std::string> sha256;
};

/// One file that a recipe's install: item put into the guest: a regular file (sha256, size), a
/// symbolic link of the archive (link, its relative target; sha256 empty, size 0), or the link
/// of a shared item (link, the blob's path inside the share; sha256 and size of the bytes it
/// leads to, which `status` and `verify` hash through the share).
struct ArtifactFile {
  std::string path; ///< absolute guest path
  std::string sha256;
  std::uint64_t size = 0;
  /// The Mach-O verdict (macho::verdict_name) of an executable file; absent for data files.
  std::optional<std::string> macho;
  std::optional<std::string> link;

  friend bool operator==(const ArtifactFile& a, const ArtifactFile& b) {
    return a.path == b.path && a.sha256 == b.sha256 && a.size == b.size && a.macho == b.macho &&
           a.link == b.link;
  }
};

/// One item of a recipe's install: block as it was installed: where the bytes came from, their
/// digest, and every guest file made from them. `status` and `verify` re-hash `files`.
struct ArtifactRecord {
  std::string source; ///< "https://…", "oci://REPO@sha256:…" or "file:PATH", as the recipe says
  std::string sha256; ///< of the fetched bytes (the archive, or the single file)
  std::uint64_t size = 0;
  std::string dest;   ///< the guest path: a directory for an archive, the file for unpack none
  std::string unpack; ///< "zip", "tar.gz" or "none"
  std::vector<ArtifactFile> files;
  /// `share: true`: `files` is the one link into the VM's read-only shared folder; the bytes
  /// stayed in the host's cache (written as "shared": true, absent otherwise).
  bool shared = false;

  friend bool operator==(const ArtifactRecord& a, const ArtifactRecord& b) {
    return a.source == b.source && a.sha256 == b.sha256 && a.size == b.size && a.dest == b.dest &&
           a.unpack == b.unpack && a.files == b.files && a.shared == b.shared;
  }
};

/// A VM made by `lume-unlock clone` from a verified golden VM: which one, the digest of its
/// host record when it was cloned, and the guest's SSH host key, which is the source's (the
/// disk is a copy; changing the key needs root in the guest).
struct ClonedFrom {
  std::optional<std::string> vm;
  std::optional<std::string> record_sha256;
  std::optional<std::string> ssh_host_key; ///< "SHA256:<base64>", the source's
};

inline constexpr const char* k_schema = "lume-unlock/provenance/v1";

struct Provenance {
  std::string vm;
  std::optional<std::string> lume_url;
  std::optional<ImageInfo> image;
  std::optional<HardwareInfo> hardware;
  std::optional<GuestInfo> guest;
  std::optional<ShimInfo> shim;
  std::optional<std::vector<EnablementRecord>> enablement;
  std::optional<ProbeInfo> probe;
  std::optional<RecipeInfo> recipe;
  std::optional<ClonedFrom> cloned_from;
  /// The last `lume-unlock bench` (verify::bench_record): the figures per test, the llama.cpp
  /// build, model type, host chip when known, the unlocked run's log verdict and the gate.
  std::optional<nlohmann::json> bench;
  /// What the recipe's install: block put into the guest (absent before the block existed, or
  /// when the recipe installs nothing).
  std::optional<std::vector<ArtifactRecord>> artifacts;
  std::optional<std::string> created_at; ///< RFC 3339, UTC
  std::optional<std::string> updated_at; ///< RFC 3339, UTC
};

/// The largest provenance record read, on the host or from a guest: a record with a bench and a
/// hundred enablement entries is tens of KiB; anything near this was not written by us.
inline constexpr std::size_t k_max_provenance_bytes = 4u << 20;

/// The JSON document, keys exactly as in DESIGN §7, absent values omitted.
nlohmann::json to_json(const Provenance& record);
/// Parses a provenance document. Fails (category verification) on a wrong schema, a missing
/// vm, or a key of the wrong type, naming the key. Unknown keys are ignored.
Result<Provenance> provenance_from_json(const nlohmann::json& json);
Result<Provenance> parse_provenance(std::string_view text);

/// "<state_dir>/vms/<vm>/provenance.json". Fails (usage) for a VM name that is empty, "." or
/// "..", or has characters outside [A-Za-z0-9._-].
Result<std::string> provenance_path(const std::string& state_dir, const std::string& vm);

/// Writes the record atomically (temporary file + rename), creating the directory.
Status write_provenance(const std::string& state_dir, const Provenance& record);
/// Reads the record of `vm` (a regular file of at most k_max_provenance_bytes); a missing file is
/// an error naming the path.
Result<Provenance> read_provenance(const std::string& state_dir, const std::string& vm);

/// The current UTC time as RFC 3339 ("2026-12-02T17:22:59Z").
std::string rfc3339_now();
/// True for "YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)".
bool is_rfc3339(std::string_view text);

/// True when two records say the same thing, timestamps aside.
bool same_provenance(const Provenance& a, const Provenance& b);

/// The host record after a pull: `existing` (the record on the host, nullopt when there is none
/// or it is unreadable) with_pulled_image(`pulled`); created_at kept (or `now` when absent),
/// updated_at `now`. nullopt when an existing record would change in nothing but its times.
std::optional<Provenance> record_after_pull(const std::optional<Provenance>& existing,
                                            const Provenance& pulled,
                                            const std::string& now);

/// The record a pulled VM adopts from the record baked into its image: `baked`
/// with_pulled_image(`pulled`), so that the bake's shim, enablement and probe sections stay.
/// When that differs from `baked` (same_provenance), created_at and updated_at are `now`;
/// otherwise the baked times are kept.
Provenance
adopt_baked_record(const Provenance& baked, const Provenance& pulled, const std::string& now);

// Which shim ran in a VM, in words: Cua's certified build, another externally built dylib, or
// lume-unlock's own.

/// One dylib of Cua's certified release (trycua/cua b296ec9c,
/// libs/lume/metal-capability-shim/Release/SHA256SUMS; docs/sources.md).
struct CertifiedBuild {
  const char* file;   ///< its name in SHA256SUMS
  const char* sha256; ///< its digest there
};

/// The certified dylibs: LumeMetalCapabilities-arm64.dylib (the build every published figure
/// used) and LumeMetalCapabilities-arm64e.dylib.
const std::vector<CertifiedBuild>& certified_builds();

/// The certified build with this digest (lower-case hex), if it is one.
std::optional<CertifiedBuild> certified_build(std::string_view sha256);

/// "certified upstream build 515b9d84…" (an external dylib whose digest is a certified one),
/// "external shim <sha256>" (any other external dylib), "lume-unlock shim <sha256>" (the
/// bundle's dylib, the first of `files`); empty when the record names no shim file.
std::string shim_that_ran(const ShimInfo& shim);

} // namespace lume_unlock::provenance

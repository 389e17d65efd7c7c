#pragma once

#include "enablement/enablement_list.hpp"
#include "fetch/fetch.hpp"
#include "signing/signing.hpp"
#include "util/result.hpp"
#include "verify/bench.hpp"

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::recipe {

struct Recipe;

/// One item of a recipe's `install:` block: an artifact put into the guest (issue 24;
/// image-recipes/README.md documents the fields).
struct InstallItem {
  std::string field; ///< "install[0]", for messages and the lock
  /// Where the bytes come from. A `file:` source holds the path as written; install_source()
  /// resolves it against the recipe's directory.
  fetch::ArtifactSource source;
  std::optional<std::string> sha256; ///< 64 lower-case hex; absent: the lock (or the fetch) says
  std::string dest;                  ///< absolute guest path: the tree's root, or the file
  fetch::UnpackFormat unpack = fetch::UnpackFormat::none;
  unsigned strip_components = 0;
  mode_t mode = 0644; ///< of the file, for unpack none; archives keep their own (0755 or 0644)
  /// Archives only (`files:`): SHA-256 (64 lower-case hex) of files inside the unpacked tree,
  /// by their path below `dest` ("llama-bench"), so a publisher's digest of one program is
  /// checked, not assumed. Checked on the host before any byte reaches the guest.
  std::map<std::string, std::string> file_sha256;
  /// `share: true` (issue 32): the verified blob stays in the host's cache, which the VM gets
  /// as a read-only shared directory, and `dest` becomes a link to the blob inside the share,
  /// so no byte crosses SSH. A single file from a url only (apply/shared_artifact.hpp).
  bool share = false;

  /// The file name of `dest` ("llama.cpp", "model.gguf"): the progress label.
  std::string label() const;
};

/// The item's source, with a `file:` path resolved against the recipe's directory.
fetch::ArtifactSource install_source(const Recipe& recipe, const InstallItem& item);

/// The guest path of one file of an unpacked item (`relative` empty: the dest itself).
std::string guest_path_of(const InstallItem& item, const std::string& relative);

/// Checks a guest path a recipe names as an install destination: absolute, normal (no "//",
/// ".", ".." or trailing "/"), printable without '\', not "/". Returns why it is not, or nothing.
std::optional<std::string> dest_problem(const std::string& path);

/// Where the VM comes from: a registry image, or an IPSW installed unattended.
struct SourceSpec {
  std::optional<std::string> image; ///< OCI reference, e.g. ghcr.io/trycua/macos-tahoe-cua:latest
  std::optional<std::string> ipsw;  ///< "latest" or a host path to an .ipsw
  std::optional<std::string> unattended; ///< preset ("tahoe") or host path, with ipsw only
  /// The macOS version the guest runs (`sw_vers -productVersion`, "26.5.2"): `lock` refuses an
  /// install: program built for a newer one. Absent: that check is skipped, with a note.
  std::optional<std::string> macos;
};

struct VmSpec {
  int cpu = 8;
  std::uint64_t memory_bytes = 16ULL << 30;
  std::optional<std::uint64_t> disk_bytes; ///< absent: keep the image's disk
  std::optional<std::string> display;      ///< "WIDTHxHEIGHT"
  /// `display: vnc`: the VM keeps Lume's VNC listener; without it runs are started without one.
  bool vnc = false;
};

struct GuestSpec {
  std::string user = "lume";
};

/// A shim dylib built elsewhere (recipe `shim: {dylib: PATH, sha256: HEX}`), e.g. Cua's certified
/// build made with upstream's Scripts/build.sh: installed in place of the bundle's shim (the
/// bundle still brings the probe), and refused unless the file's SHA-256 is `sha256`.
struct ExternalShimSpec {
  std::string dylib;  ///< a host path, absolute or relative to the recipe's directory
  std::string sha256; ///< 64 lower-case hex digits (upper case in the recipe is lowered)
};

struct ShimSpec {
  /// The capability profile the shim is configured with (DESIGN §4.1); entries may override it.
  enablement::Profile profile;
  /// A bundle directory or archive on the host, or an OCI reference pinned by digest.
  std::optional<std::string> bundle;
  std::optional<ExternalShimSpec> external;
};

/// Who may vouch for the image and the shim bundle (recipe `trust:`). Each entry of `keys` is a
/// public key PEM written inline, or the path of a PEM file relative to the recipe's directory.
/// When any key is listed, create, pull and the bundle fetch refuse what none of them signed.
struct TrustSpec {
  std::vector<std::string> keys;
  /// Where each entry of `keys` is written ("recipe.yaml:12:7"), for errors found when the key
  /// is read; may be shorter than `keys` for a spec built in code.
  std::vector<std::string> key_sources;
  bool required() const { return !keys.empty(); }
};

/// How lume-unlock reaches registries for this recipe (recipe `registry:`).
struct RegistrySpec {
  /// PEM file of the CAs a registry's TLS certificate must chain to (a company registry on a
  /// private CA); a path relative to the recipe's directory. --registry-ca overrides it, and it
  /// overrides SSL_CERT_FILE.
  std::optional<std::string> ca;
};

/// What `create --bench` and `bake --bench` measure once the VM is provisioned, and the gate
/// it must pass (recipe `bench:`): the settings of `lume-unlock bench`, in the same types.
struct BenchSpec {
  std::string entry = verify::k_default_bench_entry; ///< an entry of the recipe's enablement
  verify::BenchRequest request;                      ///< request.model is required
  verify::BenchThresholds thresholds;
  /// The entry that runs llama-perplexity (an entry of the recipe's enablement), and how far the
  /// unlocked perplexity may drift from the CPU's (bench.max_perplexity_drift; unset: the
  /// default, verify::k_default_max_perplexity_drift).
  std::string perplexity_entry = verify::k_default_perplexity_entry;
  std::optional<double> max_perplexity_drift;
  /// The host's `llama-bench -o json` of the same model and sizes, to compare with; a path
  /// relative to the recipe's directory.
  std::optional<std::string> host_json;
  /// The host's llama-perplexity output (stdout and stderr together) on lume-unlock's text, to
  /// compare the unlocked perplexity with; a path relative to the recipe's directory.
  std::optional<std::string> host_perplexity;
  /// The published run this bench reproduces (bench.published): its figures, source and
  /// command. The recipe is refused unless the bench runs exactly that command.
  std::optional<verify::PublishedRun> published;
};

/// An image recipe (image-recipes/README.md documents every field).
struct Recipe {
  std::string path;   ///< as given by the user
  std::string sha256; ///< of the recipe file's bytes
  SourceSpec source;
  VmSpec vm;
  GuestSpec guest;
  ShimSpec shim;
  enablement::EnablementList enablement;
  TrustSpec trust;
  RegistrySpec registry;
  std::optional<BenchSpec> bench;
  /// What the recipe puts into the guest (llama.cpp, models), in recipe order.
  std::vector<InstallItem> install;
};

/// The recipe's registry.ca as a path usable from the working directory (resolved against the
/// recipe's directory); nullopt when the recipe names none. Usage error (exit 2) when the file
/// is not there.
Result<std::optional<std::string>> registry_ca_file(const Recipe& recipe);

/// The recipe's bench.host_json as a path usable from the working directory (resolved against
/// the recipe's directory); nullopt when the recipe names none. Usage error (exit 2) when the
/// file is not there.
Result<std::optional<std::string>> bench_host_json_file(const Recipe& recipe);

/// bench.host_perplexity resolved the same way (the host's llama-perplexity output).
Result<std::optional<std::string>> bench_host_perplexity_file(const Recipe& recipe);

/// An external shim on the host whose bytes matched the recipe's digest.
struct VerifiedExternalShim {
  std::string path;   ///< usable from the working directory (resolved against the recipe's)
  std::string sha256; ///< what the recipe names, and what the file hashed to
};

/// The recipe's shim.dylib, hashed and compared with shim.sha256; nullopt when the recipe names
/// none. Usage error (exit 2) when the file cannot be read; verification error (exit 6) naming
/// both digests when it does not match. Read-only: create's preflight calls it, so a wrong file
/// stops the create before anything reaches Lume or the guest.
Result<std::optional<VerifiedExternalShim>> verified_external_shim(const Recipe& recipe);

/// The most memory a VM may be given: 512 GiB, the most any Apple silicon Mac has (Mac Studio,
/// M3 Ultra). Virtualization.framework cannot give a guest more memory than its host has.
inline constexpr std::uint64_t k_max_memory_bytes = 512ull << 30;
/// The largest VM disk: 16 TiB, at least the largest internal SSD Apple sells (16 TB). The disk
/// image is sparse, but a guest that fills a larger disk would fill the host first.
inline constexpr std::uint64_t k_max_disk_bytes = 16ull << 40;

/// Parses a VM memory or disk size: a unit is required ("16" reads as bytes to people while Lume
/// takes it as GB), the value must be whole bytes, above zero and at most `ceiling`. Fails with a
/// usage error (exit 2) that says which rule the text broke and how to write it.
Result<std::uint64_t> parse_vm_size(std::string_view text, std::uint64_t ceiling);

/// Parses recipe text. `source_name` prefixes every error as "source_name:line:col: field: ...".
/// Unknown keys, wrong types and out-of-range values are usage errors (exit 2).
Result<Recipe> parse_recipe(std::string_view text, const std::string& source_name);

/// The largest recipe read: hand-written recipes are a few KiB; this leaves room for generated
/// ones with hundreds of thousands of enablement entries.
inline constexpr std::size_t k_max_recipe_bytes = 64u << 20;

/// Reads (regular files of at most k_max_recipe_bytes only) and parses a recipe file.
Result<Recipe> load_recipe(const std::string& path);

/// The public keys of the recipe's `trust:` block, read and parsed: inline PEM as written, paths
/// relative to the directory of the recipe file. Empty when the recipe has no trust block. Fails
/// (usage, exit 2) naming the entry when a file is missing or an entry is not a P-256 public key.
Result<std::vector<signing::TrustedKey>> load_trusted_keys(const Recipe& recipe);

inline constexpr const char* k_lock_schema = "lume-unlock/recipe-lock/v1";

/// One reference of a recipe, pinned: the field it came from, the reference as written, and the
/// manifest digest it resolved to when the lock was made.
struct LockedReference {
  std::string field;     ///< "source.image"
  std::string reference; ///< as written in the recipe: "ghcr.io/trycua/macos-tahoe-cua:latest"
  std::string digest;    ///< "sha256:..."
  std::string pinned;    ///< canonical "registry/repository@sha256:..."
  std::optional<std::string> media_type;
  /// "sha256:<hex>" of the public key (DER) whose cosign signature vouched for `digest` (the
  /// recipe's trust: block); absent when none was checked, and in locks made before.
  std::optional<std::string> signed_by;

  friend bool operator==(const LockedReference& a, const LockedReference& b) {
    return a.field == b.field && a.reference == b.reference && a.digest == b.digest &&
           a.pinned == b.pinned && a.media_type == b.media_type && a.signed_by == b.signed_by;
  }
};

/// One item of a recipe's install: block, pinned: the SHA-256 and size of the bytes its source
/// served when the lock was made. A locked create refuses any other bytes.
struct LockedArtifact {
  std::string field;  ///< "install[0]"
  std::string source; ///< fetch::describe() of the source (URLs redacted)
  std::string sha256; ///< 64 lower-case hex
  std::uint64_t size = 0;

  friend bool operator==(const LockedArtifact& a, const LockedArtifact& b) {
    return a.field == b.field && a.source == b.source && a.sha256 == b.sha256 && a.size == b.size;
  }
};

/// One file of a baked image's shim, as recorded when it was baked.
struct BakedFile {
  std::string path;   ///< absolute path in the guest
  std::string sha256; ///< 64 hex

  friend bool operator==(const BakedFile& a, const BakedFile& b) {
    return a.path == b.path && a.sha256 == b.sha256;
  }
};

/// An image `lume-unlock bake` pushed from this recipe: where it went, the manifest digest the
/// registry holds for it (resolved after the push, since Lume never reports one), when, from
/// which recipe bytes, and the shim files inside it.
struct BakedImage {
  std::string reference;     ///< as pushed: "registry/org/name:tag"
  std::string digest;        ///< "sha256:..."
  std::string pinned;        ///< "registry/org/name@sha256:..."
  std::string pushed_at;     ///< RFC 3339
  std::string recipe_sha256; ///< the recipe bytes it was baked from
  std::vector<BakedFile> shim_files;
  /// The public key (as LockedReference::signed_by) that signed the pushed digest with
  /// `bake --sign-key`; absent for unsigned bakes and in locks made before.
  std::optional<std::string> signed_by;

  friend bool operator==(const BakedImage& a, const BakedImage& b) {
    return a.reference == b.reference && a.digest == b.digest && a.pinned == b.pinned &&
           a.pushed_at == b.pushed_at && a.recipe_sha256 == b.recipe_sha256 &&
           a.shim_files == b.shim_files && a.signed_by == b.signed_by;
  }
};

nlohmann::json to_json(const BakedImage& baked);

/// The lock file of DESIGN §7: the recipe's SHA-256 and every reference resolved to a digest, so
/// that a create from a locked recipe is reproducible.
struct LockFile {
  std::string recipe_path;   ///< as given to `lume-unlock lock`
  std::string recipe_sha256; ///< 64 hex of the recipe's bytes
  std::vector<LockedReference> references;
  /// The install: items, in recipe order; absent from the file when the recipe has none.
  std::vector<LockedArtifact> artifacts;
  std::vector<BakedImage> baked; ///< newest last; absent from the file when empty
  std::optional<std::string> created_at;

  /// The entry for a field, or nullptr.
  const LockedReference* find(const std::string& field) const;
  /// The pinned artifact of an install: field ("install[0]"), or nullptr.
  const LockedArtifact* find_artifact(const std::string& field) const;
  /// True when the lock was made from exactly these recipe bytes.
  bool matches_recipe(std::string_view recipe_bytes) const;

  friend bool operator==(const LockFile& a, const LockFile& b) {
    return a.recipe_path == b.recipe_path && a.recipe_sha256 == b.recipe_sha256 &&
           a.references == b.references && a.artifacts == b.artifacts && a.baked == b.baked &&
           a.created_at == b.created_at;
  }
};

nlohmann::json to_json(const LockFile& lock);
/// Parses lock file text; fails (category usage) as "<path>: <what is wrong>".
Result<LockFile> parse_lock_file(std::string_view text, const std::string& path);

/// The largest lock file read: a lock holds one line per reference and baked image.
inline constexpr std::size_t k_max_lock_file_bytes = 16u << 20;

/// Reads (regular files of at most k_max_lock_file_bytes only) and parses a lock file.
Result<LockFile> load_lock_file(const std::string& path);

/// Where the lock of a recipe lives: "dir/name.yaml" -> "dir/name.lock.json".
std::string lock_path_for(const std::string& recipe_path);

/// Writes the lock atomically.
Status write_lock_file(const std::string& path, const LockFile& lock);

} // namespace lume_unlock::recipe

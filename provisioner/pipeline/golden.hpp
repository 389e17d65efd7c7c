#pragma once
// A golden VM: a stopped VM lume-unlock made whose last `verify` passed against its current
// record. `clone` copies it through Lume instead of pulling the image again, then converges the
// copy as `create` would; these are the checks and records that make that safe.
#include "guest/session.hpp"
#include "lume/client.hpp"
#include "lume/types.hpp"
#include "provenance/provenance.hpp"
#include "recipe/recipe.hpp"
#include "util/result.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::pipeline {

/// Writes `<state>/vms/<vm>/verify.json` (atomically): whether the last `verify` of `vm` passed,
/// and the digest of its host record as it is now.
Status write_verify_stamp(const std::string& state_dir, const std::string& vm, bool ok);

/// True when `from` (create's --from) names a VM to clone rather than an image: an image
/// reference always has a tag (':'), a digest ('@') or a registry path ('/'); a VM name has none.
bool names_a_vm(std::string_view from);

/// The recipe path recorded for `vm` (what `clone` uses without --recipe); a usage error when
/// the VM has no host record or its record names no recipe.
std::string golden_recipe_path(const std::string& state_dir, const std::string& vm);

/// What a clone takes from its source.
struct GoldenSource {
  lume::VmName vm{"golden"};
  provenance::Provenance record;
  std::string record_sha256;
  std::string public_key;  ///< the source's per-VM key line, revoked in the clone
  std::string known_host;  ///< the source's pinned host key: the clone's, as the disk is a copy
  std::string fingerprint; ///< of that host key, "SHA256:<base64>"
};

/// Checks that `source` may be cloned for `recipe` (with its `lock`, when it has one): a VM
/// lume-unlock made (host record), stopped, whose last verify passed against that very record,
/// made from the same recipe bytes and (locked) the same image digest. Throws a usage Error
/// (exit 2) saying what differs and how to fix it; changes nothing.
GoldenSource check_golden_source(lume::LumeApi& lume,
                                 const std::string& state_dir,
                                 const lume::VmName& source,
                                 const recipe::Recipe& recipe,
                                 const recipe::LockFile* lock);

/// Removes the lines holding `public_key` (its "<type> <base64>" part) from the guest's
/// ~/.ssh/authorized_keys; true when it was there.
Result<bool> revoke_authorized_key(guest::GuestSession& session, const std::string& public_key);

} // namespace lume_unlock::pipeline

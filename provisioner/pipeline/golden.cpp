#include "pipeline/golden.hpp"

#include "guest/shell_quote.hpp"
#include "guest/ssh_session.hpp"
#include "util/atomic_file.hpp"
#include "util/json_reader.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace lume_unlock::pipeline {

namespace {

std::string stamp_path(const std::string& state_dir, const std::string& vm) {
  return guest::vm_key_paths(state_dir, vm).value_or_throw().directory + "/verify.json";
}

Error refused(const std::string& source, const std::string& why, const std::string& hint) {
  return Error(ErrorCategory::usage, "clone of VM '" + source + "'", why, hint);
}

/// The "<type> <base64>" part of a public key or known-host line.
std::string key_part(const std::string& line) {
  const auto first = line.find(' ');
  const auto second = first == std::string::npos ? first : line.find_first_of(" \n", first + 1);
  return util::trim(line.substr(0, second));
}

/// With a lock, the golden VM must hold the pinned image, or an image this recipe baked (a VM
/// pulled from a bake holds the baked digest, which the lock lists).
void check_golden_image(const std::string& name,
                        const provenance::Provenance& record,
                        const recipe::Recipe& recipe,
                        const recipe::LockFile* lock) {
  const auto* pinned = lock != nullptr ? lock->find("source.image") : nullptr;
  const auto digest = record.image ? record.image->digest : std::nullopt;
  const bool baked =
      lock != nullptr &&
      std::any_of(lock->baked.begin(), lock->baked.end(), [&](const recipe::BakedImage& image) {
        return image.digest == digest && image.recipe_sha256 == recipe.sha256;
      });
  if (pinned != nullptr && digest != pinned->digest && !baked) {
    throw refused(name,
                  "it holds image " + digest.value_or("(none recorded)") + ", the lock pins " +
                      pinned->digest + " and lists no bake of this recipe with that digest",
                  "create a golden VM from the locked recipe, or refresh the lock");
  }
}

struct VerifyStamp {
  bool ok = false;
  std::string record_sha256; ///< of the host's provenance.json when verify ran
  std::string at;            ///< RFC 3339
};

/// The VM's stamp; nullopt when there is none or it cannot be read.
std::optional<VerifyStamp> read_verify_stamp(const std::string& state_dir, const std::string& vm) {
  auto text = util::read_file(stamp_path(state_dir, vm));
  if (!text.ok()) {
    return std::nullopt;
  }
  const util::JsonDocument document{ErrorCategory::verification, "verify stamp"};
  auto stamp = util::read_json_text(text.value(), document, [](const util::JsonValue& v) {
    const util::JsonObject in = v.object();
    return VerifyStamp{in.at("ok", "a boolean").boolean(),
                       in.at("record_sha256", "a string").string(),
                       in.at("at", "a string").string()};
  });
  return stamp.ok() ? std::optional<VerifyStamp>(stamp.value()) : std::nullopt;
}

} // namespace

Status write_verify_stamp(const std::string& state_dir, const std::string& vm, bool ok) {
  LUME_UNLOCK_TRY_ASSIGN(auto record_path, provenance::provenance_path(state_dir, vm));
  LUME_UNLOCK_TRY_ASSIGN(auto record_sha256, util::sha256_file_hex(record_path));
  const nlohmann::json stamp = {{"vm", vm},
                                {"ok", ok},
                                {"record_sha256", "sha256:" + record_sha256},
                                {"at", provenance::rfc3339_now()}};
  return util::write_file_atomic(stamp_path(state_dir, vm), stamp.dump(2) + "\n", 0644);
}

bool names_a_vm(std::string_view from) {
  return !from.empty() && from.find_first_of(":/@") == std::string_view::npos;
}

std::string golden_recipe_path(const std::string& state_dir, const std::string& vm) {
  auto record = provenance::read_provenance(state_dir, vm);
  if (!record.ok() || !record.value().recipe || !record.value().recipe->path) {
    throw refused(vm,
                  record.ok() ? "its record names no recipe"
                              : "lume-unlock did not make it (" + record.error().why() + ")",
                  "give the recipe it was made from with --recipe FILE");
  }
  return *record.value().recipe->path;
}

GoldenSource check_golden_source(lume::LumeApi& lume,
                                 const std::string& state_dir,
                                 const lume::VmName& source,
                                 const recipe::Recipe& recipe,
                                 const recipe::LockFile* lock) {
  const std::string& name = source;
  auto record = provenance::read_provenance(state_dir, name);
  if (!record.ok()) {
    throw refused(name,
                  "lume-unlock did not make it (no host record: " + record.error().why() + ")",
                  "clone a VM made with 'lume-unlock create', or create this one");
  }
  GoldenSource golden;
  golden.vm = source;
  golden.record = record.value();
  golden.record_sha256 =
      "sha256:" +
      util::sha256_file_hex(provenance::provenance_path(state_dir, name).value()).value_or_throw();

  const std::optional<lume::VmState> found = lume.find(lume::VmRef{name}).value_or_throw();
  if (!found) {
    throw refused(name, "Lume has no VM of that name", "list Lume's VMs with 'lume ls'");
  }
  const lume::VmState& state = *found;
  if (lume::status_of(state) != lume::VmStatus::stopped) {
    throw refused(name,
                  "it is " + lume::describe(state) + "; Lume clones only a stopped VM",
                  "stop it first ('lume stop " + name + "'), then clone again");
  }
  const auto stamp = read_verify_stamp(state_dir, name);
  const std::string verify_hint = "start it, run 'lume-unlock verify " + name +
                                  "' until it passes, stop it ('lume stop " + name +
                                  "'), then clone again";
  if (!stamp) {
    throw refused(name, "it has never passed 'lume-unlock verify'", verify_hint);
  }
  if (!stamp->ok) {
    throw refused(name, "its last 'lume-unlock verify' (" + stamp->at + ") failed", verify_hint);
  }
  if (stamp->record_sha256 != golden.record_sha256) {
    throw refused(
        name, "its record changed after its last passing verify (" + stamp->at + ")", verify_hint);
  }
  const auto& made_from = golden.record.recipe;
  if (!made_from || made_from->sha256 != recipe.sha256) {
    throw refused(name,
                  "it was made from another recipe (" +
                      (made_from ? made_from->path.value_or("?") + " " +
                                       made_from->sha256.value_or("?").substr(0, 12) + "…"
                                 : std::string("none recorded")) +
                      ", not " + recipe.path + " " + recipe.sha256.substr(0, 12) + "…)",
                  "clone a VM made from this recipe, or create one with 'lume-unlock create NAME "
                  "--recipe " +
                      recipe.path + "'");
  }
  check_golden_image(name, golden.record, recipe, lock);
  const auto paths = guest::vm_key_paths(state_dir, name).value_or_throw();
  auto public_key = util::read_file(paths.public_key);
  auto known_host = util::read_file(paths.known_host);
  if (!public_key.ok() || !known_host.ok()) {
    throw refused(name,
                  "its per-VM SSH key or pinned host key is missing from " + paths.directory,
                  verify_hint);
  }
  golden.public_key = key_part(public_key.value());
  golden.known_host = known_host.value();
  golden.fingerprint = guest::pinned_fingerprint(key_part(known_host.value()));
  return golden;
}

Result<bool> revoke_authorized_key(guest::GuestSession& session, const std::string& public_key) {
  LUME_UNLOCK_TRY_ASSIGN(auto quoted, guest::shell_quote(public_key));
  // Rewritten through a temporary beside it (same mode), so a failure leaves the file whole.
  LUME_UNLOCK_TRY_ASSIGN(
      auto result,
      session.run("f=\"$HOME/.ssh/authorized_keys\"; [ -f \"$f\" ] && grep -qF " + quoted +
                  " \"$f\" || { echo absent; exit 0; }; umask 077 && "
                  "{ grep -vF " +
                  quoted +
                  " \"$f\" || true; } > \"$f.lume-unlock.tmp\" && "
                  "mv \"$f.lume-unlock.tmp\" \"$f\" && echo revoked"));
  if (result.exit_status != 0) {
    return Error(ErrorCategory::guest,
                 "revoking the source VM's key in ~/.ssh/authorized_keys",
                 "exit status " + std::to_string(result.exit_status) + ": " +
                     util::trim(result.stderr_text),
                 "check that the guest user's ~/.ssh is writable, then run the clone again");
  }
  return util::trim(result.stdout_text) == "revoked";
}

} // namespace lume_unlock::pipeline

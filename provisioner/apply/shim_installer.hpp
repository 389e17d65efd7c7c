#pragma once

#include "apply/shim_record.hpp"
#include "bundle/bundle.hpp"
#include "guest/guest_layout.hpp"
#include "guest/guest_records.hpp"
#include "guest/session.hpp"
#include "recipe/recipe.hpp"
#include "util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lume_unlock::apply {

/// What install_shim() did.
struct ShimInstallReport {
  bool changed = false;       ///< false: every file was already in place with its SHA-256
  std::string platform;       ///< the bundle platform installed ("linux-x86_64")
  InstalledShim installed;    ///< the record now in the guest (current.json)
  std::uint64_t commands = 0; ///< remote commands run
};

/// What install_shim() puts in the guest for one bundle platform: its record, and each file as
/// (guest path, bundle file), the shim first.
struct ShimPlacement {
  InstalledShim record;
  std::vector<std::pair<std::string, bundle::BundleFile>> files;
};

/// The placement of `bundle`'s platform entry `platform`, with guest paths from `layout`: the shim
/// in the content-addressed <support>/shim/<sha256>/, support files next to it, the probe in
/// <support>/bin/ with a copy of the support files beside it (the probe finds its libraries
/// through $ORIGIN). With `external`, its dylib is the shim (layout made for its digest and file
/// name) and the record says `external`; the rest is the bundle's.
ShimPlacement installed_shim_for(const bundle::LoadedBundle& bundle,
                                 const std::string& platform,
                                 const guest::GuestLayout& layout,
                                 const std::optional<recipe::VerifiedExternalShim>& external = {});

/// Installs the bundle's entry for this guest (facts.kernel/machine → platform; an error of
/// category verification naming the bundle's platforms when it has none for the guest).
/// Observes first with ONE command (`shasum -a 256` of every expected path, current.json
/// included) and returns changed=false when all match; otherwise installs every file and
/// current.json through install_payload() (2–3 commands). Idempotent. With `external` (a
/// recipe's shim.dylib, its digest checked by the caller's preflight) that file is installed as
/// the shim, content-addressed by its own digest, instead of the bundle's; the guest's install
/// checks its SHA-256 again after the transfer.
Result<ShimInstallReport>
install_shim(guest::GuestSession& session,
             const bundle::LoadedBundle& bundle,
             const guest::GuestFacts& facts,
             const std::optional<recipe::VerifiedExternalShim>& external = {});

} // namespace lume_unlock::apply

#pragma once

#include "provenance/provenance.hpp"

#include <optional>
#include <string>

namespace lume_unlock::provenance {

/// True when two records say the same thing, timestamps aside.
bool same_provenance(const Provenance& a, const Provenance& b);

/// `record` with the VM name, Lume URL, image and hardware of `pulled` (what a pull knows of a
/// VM), every other section kept as it was.
Provenance with_pulled_image(Provenance record, const Provenance& pulled);

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

} // namespace lume_unlock::provenance

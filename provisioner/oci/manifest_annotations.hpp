#pragma once

#include "oci/manifest.hpp"
#include "util/result.hpp"

#include <string>
#include <string_view>

namespace lume_unlock::oci {

/// The manifest `bytes` with `added` merged into its manifest-level annotations (a key already
/// there is replaced), every other field kept as received, unknown keys included: the config
/// and layer descriptors are the same JSON values, so they name the same blobs. The result is
/// compact JSON with sorted keys, a new manifest with a new digest. Fails (category registry)
/// on bytes that are not a JSON object or whose annotations are not an object of strings.
Result<std::string> with_manifest_annotations(std::string_view bytes, const Annotations& added);

} // namespace lume_unlock::oci

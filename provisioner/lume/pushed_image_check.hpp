#pragma once

#include "oci/manifest.hpp"
#include "util/result.hpp"

#include <string>
#include <vector>

namespace lume_unlock::lume {

/// Whether a manifest in the registry is the push of a local Lume VM directory. Lume never says
/// what it pushed (lume-oci.md §2.4), and someone else may move the tag between the push and our
/// read, so the manifest is checked against the VM's own bytes: the NVRAM layer's digest is the
/// SHA-256 of nvram.bin (stored uncompressed), and every disk layer's
/// `org.trycua.lume.content.uncompressed-digest` is the SHA-256 of its slice of disk.img
/// (`part.offset`, `content.uncompressed-size`), the slices covering the whole disk.
struct PushedImageCheck {
  std::vector<std::string>
      differences; ///< "disk.img.part.3 (offset …): sha256:… here, sha256:… in the registry"
  std::uint64_t disk_bytes_hashed = 0;
  bool matches() const { return differences.empty(); }
};

/// Compares `manifest` with `vm_dir` (holding nvram.bin and disk.img). Fails (category registry,
/// "cannot be verified") when the manifest is not a Lume OCI image or lacks the annotations the
/// comparison needs, and (category failure) when the VM's files cannot be read.
Result<PushedImageCheck> check_pushed_image(const oci::Manifest& manifest,
                                            const std::string& vm_dir,
                                            const std::string& what);

} // namespace lume_unlock::lume

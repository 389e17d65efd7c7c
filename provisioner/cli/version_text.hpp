#pragma once

#include <string>

namespace lume_unlock::cli {

/// What `lume-unlock --version` prints: the version and source revision, then the shim bundle
/// this binary would use without --bundle or a recipe ($LUME_UNLOCK_BUNDLE, installed, build
/// tree) and its digest: the SHA-256 of its bundle.json. bundle.json names the version, the
/// source revision and every file's SHA-256, so this one digest pins the whole bundle, and it is
/// the same whether the bundle is a directory or the archive made from it. A bundle that cannot
/// be read is said so on that line; this never fails.
std::string version_text();

} // namespace lume_unlock::cli

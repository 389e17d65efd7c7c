#pragma once

#include <map>
#include <string>

namespace lume_unlock::test {

/// A llama.cpp macOS arm64 release built the way its publisher builds one
/// (ggml-org/llama.cpp .github/workflows/release.yml, docs/sources.md): a build/bin folder with
/// the programs, each shared library versioned with its two links as CMake names them
/// (libllama.dylib -> libllama.0.dylib -> libllama.0.0.<build>.dylib; ggml's libraries carry
/// ggml's own version instead, libggml.0.dylib -> libggml.<ggml_version>.dylib) and LICENSE
/// (copied in by the workflow), packed by the workflow's own command, run with bsdtar (BSD
/// tar's `-s`):
///   tar -czvf llama-<tag>-bin-macos-arm64.tar.gz -s ",^\.,llama-<tag>," -C ./build/bin .
/// so the archive's top folder is llama-<tag>/ and nothing else is in it.
struct LlamaRelease {
  std::string tag;          ///< "b10167"
  std::string asset_name;   ///< "llama-b10167-bin-macos-arm64.tar.gz"
  std::string archive_path; ///< <dir>/<asset_name>
  /// Every link of the tree (path below llama-<tag>/ → its relative target).
  std::map<std::string, std::string> links;
  /// Every regular file of the tree (path below llama-<tag>/ → its bytes).
  std::map<std::string, std::string> files;
};

/// The ggml version of the stand-in's libraries: GGML_VERSION in ggml/CMakeLists.txt at the
/// commit docs/sources.md cites (only the naming matters here, not the number).
inline constexpr const char* k_ggml_version = "0.21.0";

/// Builds <dir>/build/bin and packs it as above. `programs` maps program names
/// ("llama-server") to their bytes (mode 0755). Fails the calling test (ADD_FAILURE) when
/// bsdtar is missing or fails; the archive is then absent.
LlamaRelease make_llama_release(const std::string& dir,
                                const std::string& tag,
                                const std::map<std::string, std::string>& programs);

} // namespace lume_unlock::test

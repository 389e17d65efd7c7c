#include "support/llama_release.hpp"

#include "support/file_io.hpp"
#include "support/process.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace lume_unlock::test {

namespace fs = std::filesystem;

LlamaRelease make_llama_release(const std::string& dir,
                                const std::string& tag,
                                const std::map<std::string, std::string>& programs) {
  LlamaRelease release;
  release.tag = tag;
  release.asset_name = "llama-" + tag + "-bin-macos-arm64.tar.gz";
  release.archive_path = dir + "/" + release.asset_name;
  const std::string bin = dir + "/build/bin";
  fs::create_directories(bin);
  for (const auto& [name, bytes] : programs) {
    write_file(bin + "/" + name, bytes, 0755);
    release.files[name] = bytes;
  }
  // The tag is b<build number>; llama's VERSION is 0.0.<build number>, ggml's its own.
  const std::string build = tag.size() > 1 && tag[0] == 'b' ? tag.substr(1) : tag;
  const std::map<std::string, std::string> versions = {{"libllama", "0.0." + build},
                                                       {"libggml", k_ggml_version},
                                                       {"libggml-base", k_ggml_version},
                                                       {"libggml-cpu", k_ggml_version},
                                                       {"libggml-metal", k_ggml_version},
                                                       {"libggml-blas", k_ggml_version},
                                                       {"libggml-rpc", k_ggml_version}};
  for (const auto& [library, version] : versions) {
    const std::string real = library + "." + version + ".dylib";
    const std::string so = library + ".0.dylib";
    const std::string bytes = "Mach-O dylib " + real + "\n";
    write_file(bin + "/" + real, bytes, 0755);
    release.files[real] = bytes;
    fs::create_symlink(real, bin + "/" + so);
    fs::create_symlink(so, bin + "/" + library + ".dylib");
    release.links[so] = real;
    release.links[library + ".dylib"] = so;
  }
  const std::string license = "MIT License\n\nCopyright (c) 2023-2026 The ggml authors\n";
  write_file(bin + "/LICENSE", license);
  release.files["LICENSE"] = license;

  // The workflow's command, word for word, from the folder that holds build/bin.
  const auto packed =
      run_command({"/bin/sh",
                   "-c",
                   "cd \"$1\" && exec bsdtar -czvf \"$2\" -s \"$3\" -C ./build/bin .",
                   "sh",
                   dir,
                   release.asset_name,
                   ",^\\.,llama-" + tag + ","});
  if (packed.exit_status != 0) {
    ADD_FAILURE() << "bsdtar (package libarchive-tools, installed by scripts/bootstrap) failed: "
                  << packed.stderr_text;
  }
  return release;
}

} // namespace lume_unlock::test

#include "recipe/recipe.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::recipe {
namespace {

const std::string k_hex(64, 'a');

Result<Recipe> with_install(const std::string& install) {
  return parse_recipe("source: {image: a.io/b/c:1}\ninstall:\n" + install, "r.yaml");
}

std::string error_of(const std::string& install) {
  auto r = with_install(install);
  EXPECT_FALSE(r.ok()) << "accepted:\n" << install;
  return r.ok() ? std::string()
                : r.error().message() +
                      (r.error().hint().empty() ? "" : " | hint: " + r.error().hint());
}

TEST(RecipeInstall, ParsesEveryFieldOfEachItem) {
  auto r = with_install("  - url: https://example.com/llama-b1-bin-macos-arm64.tar.gz\n"
                        "    sha256: sha256:" +
                        k_hex +
                        "\n"
                        "    unpack: tar.gz\n"
                        "    strip_components: 1\n"
                        "    files:\n"
                        "      llama-bench: " +
                        k_hex +
                        "\n"
                        "      lib/libllama.0.0.1.dylib: sha256:" +
                        k_hex +
                        "\n"
                        "    dest: /Users/lume/llama.cpp\n"
                        "  - file: models/tiny.gguf\n"
                        "    dest: /Users/lume/models/model.gguf\n"
                        "    mode: '0600'\n"
                        "  - url: oci://registry.example/models/tiny@sha256:" +
                        k_hex + "\n    dest: /Users/lume/models/other.gguf\n");
  ASSERT_TRUE(r.ok()) << r.error().message();
  const auto& install = r.value().install;
  ASSERT_EQ(install.size(), 3u);
  EXPECT_EQ(install[0].field, "install[0]");
  EXPECT_EQ(install[0].source.kind, fetch::ArtifactSource::Kind::https);
  EXPECT_EQ(install[0].source.text, "https://example.com/llama-b1-bin-macos-arm64.tar.gz");
  EXPECT_EQ(install[0].sha256, k_hex);
  EXPECT_EQ(install[0].unpack, fetch::UnpackFormat::tar_gz);
  EXPECT_EQ(install[0].file_sha256,
            (std::map<std::string, std::string>{{"llama-bench", k_hex},
                                                {"lib/libllama.0.0.1.dylib", k_hex}}));
  EXPECT_TRUE(install[1].file_sha256.empty());
  EXPECT_EQ(install[0].strip_components, 1u);
  EXPECT_EQ(install[0].dest, "/Users/lume/llama.cpp");
  EXPECT_EQ(install[0].label(), "llama.cpp");
  EXPECT_EQ(install[1].source.kind, fetch::ArtifactSource::Kind::file);
  EXPECT_EQ(install[1].unpack, fetch::UnpackFormat::none);
  EXPECT_EQ(install[1].mode, 0600u);
  EXPECT_FALSE(install[1].sha256.has_value());
  EXPECT_EQ(install[2].source.kind, fetch::ArtifactSource::Kind::oci);
  EXPECT_EQ(install[2].mode, 0644u) << "a single file defaults to 0644";
}

TEST(RecipeInstall, FileSourcesAreResolvedAgainstTheRecipesDirectory) {
  auto r =
      with_install("  - {file: models/tiny.gguf, dest: /m.gguf}\n  - {file: /abs/x, dest: /x}\n");
  ASSERT_TRUE(r.ok()) << r.error().message();
  Recipe recipe = r.value();
  recipe.path = "/work/recipes/r.yaml";
  EXPECT_EQ(install_source(recipe, recipe.install[0]).text, "/work/recipes/models/tiny.gguf");
  EXPECT_EQ(install_source(recipe, recipe.install[1]).text, "/abs/x");
  EXPECT_EQ(guest_path_of(recipe.install[0], ""), "/m.gguf");
}

TEST(RecipeInstall, BadItemsNameTheFieldLineColumnAndTheFix) {
  struct Case {
    const char* name;
    std::string install;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"not a list",
       "  url: https://a.io/x\n",
       "r.yaml:3:3: install: must be a non-empty list of artifacts | hint: install: [{url: "
       "https://…/llama-bXXXX-bin-macos-arm64.tar.gz, unpack: tar.gz, strip_components: 1, dest: "
       "/Users/lume/llama.cpp}]"},
      {"plain http",
       "  - {url: http://a.io/x.zip, dest: /d}\n",
       "r.yaml:3:11: install[0].url: 'http://a.io/x.zip' is plain HTTP; artifacts are fetched over "
       "TLS only | hint: use 'https://a.io/x.zip'"},
      {"typo in a key",
       "  - {url: https://a.io/x.zip, dst: /d}\n",
       "r.yaml:3:31: install[0].dst: unknown key | hint: did you mean 'dest'? (known keys here: "
       "url, file, sha256, files, dest, unpack, strip_components, mode, share)"},
      {"no source",
       "  - {dest: /d}\n",
       "r.yaml:3:5: install[0]: needs 'url' or 'file' | hint: url: https://… (or "
       "oci://REPO@sha256:…), or file: PATH relative to the recipe"},
      {"both sources",
       "  - {url: https://a.io/x, file: x, dest: /d}\n",
       "r.yaml:3:5: install[0]: names both 'url' and 'file' | hint: url: https://… (or "
       "oci://REPO@sha256:…), or file: PATH relative to the recipe"},
      {"no dest",
       "  - {url: https://a.io/x}\n",
       "r.yaml:3:5: install[0]: needs 'dest', the absolute guest path | hint: dest: "
       "/Users/lume/llama.cpp"},
      {"relative dest",
       "  - {url: https://a.io/x, dest: models/m.gguf}\n",
       "r.yaml:3:33: install[0].dest: 'models/m.gguf' is not an absolute path | hint: write the "
       "absolute guest path, e.g. /Users/lume/llama.cpp"},
      {"dotdot dest",
       "  - {url: https://a.io/x, dest: /Users/lume/../../etc/x}\n",
       "r.yaml:3:33: install[0].dest: '/Users/lume/../../etc/x' is not a normal path (empty, '.' "
       "or '..' component) | hint: write the absolute guest path, e.g. /Users/lume/llama.cpp"},
      {"short digest",
       "  - {url: https://a.io/x, dest: /d, sha256: abc}\n",
       "r.yaml:3:45: install[0].sha256: 'abc' is not a SHA-256 (64 lower-case hex digits) | hint: "
       "leave it out and run 'lume-unlock lock RECIPE' to pin what the source serves, or copy "
       "the digest the publisher gives"},
      {"unknown format",
       "  - {url: https://a.io/x, dest: /d, unpack: tgz}\n",
       "r.yaml:3:45: install[0].unpack: 'tgz' is not an unpack format; use zip, tar.gz or none"},
      {"strip without archive",
       "  - {url: https://a.io/x, dest: /d, strip_components: 1}\n",
       "r.yaml:3:55: install[0].strip_components: only applies to archives | hint: add unpack: "
       "zip or unpack: tar.gz, or remove strip_components"},
      {"mode on an archive",
       "  - {url: https://a.io/x, dest: /d, unpack: zip, mode: '0755'}\n",
       "r.yaml:3:56: install[0].mode: only applies to single files (unpack: none) | hint: an "
       "archive's files keep their own modes (0755 for executables, else 0644)"},
      {"setuid mode",
       "  - {url: https://a.io/x, dest: /d, mode: '4755'}\n",
       "r.yaml:3:43: install[0].mode: '4755' sets a set-id or sticky bit | hint: installed files "
       "get permission bits only, for example 0755"},
      {"not octal",
       "  - {url: https://a.io/x, dest: /d, mode: rwx}\n",
       "r.yaml:3:43: install[0].mode: 'rwx' is not an octal file mode | hint: for example 0755 or "
       "0644"},
      {"overlapping dests",
       "  - {url: https://a.io/x.zip, unpack: zip, dest: /Users/lume/llama.cpp}\n"
       "  - {url: https://a.io/m, dest: /Users/lume/llama.cpp/models/m.gguf}\n",
       "r.yaml:4:33: install[1].dest: '/Users/lume/llama.cpp/models/m.gguf' overlaps "
       "install[0].dest '/Users/lume/llama.cpp' | hint: give each item its own destination"},
      {"files on a single file",
       "  - {url: https://a.io/x, dest: /d, files: {x: " + k_hex + "}}\n",
       "r.yaml:3:44: install[0].files: only applies to archives | hint: a single file is pinned "
       "by the item's own sha256"},
      {"files not a mapping",
       "  - {url: https://a.io/x, dest: /d, unpack: tar.gz, files: [llama-bench]}\n",
       "r.yaml:3:60: install[0].files: must map paths inside the archive to their SHA-256 | hint: "
       "for example files: {llama-bench: <64 hex digits>}"},
      {"files path leaving the tree",
       "  - {url: https://a.io/x, dest: /d, unpack: tar.gz, files: {../x: " + k_hex + "}}\n",
       "r.yaml:3:61: install[0].files.../x: '../x' is not a relative path inside the tree | hint: "
       "write the path below dest, e.g. llama-bench"},
      {"files bad digest",
       "  - {url: https://a.io/x, dest: /d, unpack: tar.gz, files: {llama-bench: abc}}\n",
       "r.yaml:3:74: install[0].files.llama-bench: 'abc' is not a SHA-256 (64 lower-case hex "
       "digits) | hint: leave it out and run 'lume-unlock lock RECIPE' to pin what the source "
       "serves, or copy the digest the publisher gives"},
      {"credentials in the url", "  - {url: 'https://me:secret@a.io/x', dest: /d}\n", ""},
  };
  for (const auto& c : cases) {
    const std::string message = error_of(c.install);
    if (c.message.empty()) {
      EXPECT_EQ(message.find("secret"), std::string::npos) << c.name << ": " << message;
      EXPECT_NE(message.find("r.yaml:3:11: install[0].url: "), std::string::npos) << message;
    } else {
      EXPECT_EQ(message, c.message) << c.name;
    }
  }
}

TEST(RecipeInstall, DestinationsMustBeNormalAbsolutePaths) {
  for (const std::string good : {"/Users/lume/llama.cpp", "/a", "/Users/lume/models/m.gguf"}) {
    EXPECT_FALSE(dest_problem(good)) << good;
  }
  for (const std::string bad :
       {"", "/", "relative", "/a/", "/a//b", "/a/./b", "/a/../b", "/a\nb", "/a\\b"}) {
    EXPECT_TRUE(dest_problem(bad)) << bad;
  }
}

} // namespace
} // namespace lume_unlock::recipe

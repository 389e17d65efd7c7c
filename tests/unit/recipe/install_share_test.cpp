// `share: true` on an install item (issue 32): what it accepts, and what it cannot be combined
// with, each refused at the key's line and column with the fix.
#include "recipe/recipe.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::recipe {
namespace {

Result<Recipe> with_install(const std::string& install) {
  return parse_recipe("source: {image: a.io/b/c:1}\ninstall:\n" + install, "r.yaml");
}

TEST(RecipeInstallShare, ASingleFileFromAUrlMayBeShared) {
  auto r = with_install("  - url: https://a.io/m.gguf\n    dest: /Users/lume/m.gguf\n"
                        "    share: true\n"
                        "  - url: oci://a.io/models/m@sha256:" +
                        std::string(64, 'a') +
                        "\n    dest: /Users/lume/n.gguf\n    share: false\n"
                        "  - {url: https://a.io/o.gguf, dest: /Users/lume/o.gguf}\n");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r.value().install[0].share);
  EXPECT_FALSE(r.value().install[1].share);
  EXPECT_FALSE(r.value().install[2].share) << "sent over SSH unless the recipe says share";
}

TEST(RecipeInstallShare, WhatCannotBeSharedIsRefusedWithTheFix) {
  struct Case {
    const char* name;
    std::string install;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"an archive",
       "  - {url: https://a.io/x.tar.gz, unpack: tar.gz, dest: /d, share: true}\n",
       "r.yaml:3:67: install[0].share: cannot share an archive (unpack: tar.gz): the guest sees "
       "the cached blob itself, read-only, and nothing unpacks it | hint: remove share (the tree "
       "is sent over SSH), or share the single files it holds as items of their own"},
      {"a host file",
       "  - {file: m.gguf, dest: /d, share: true}\n",
       "r.yaml:3:37: install[0].share: cannot share a 'file:' source: it is hashed in place and "
       "never enters the cache, and only the cache is shared with the VM | hint: remove share, or "
       "publish the file and name it with url: (https:// or oci://)"},
      {"a mode",
       "  - {url: https://a.io/m, dest: /d, mode: '0755', share: true}\n",
       "r.yaml:3:58: install[0].share: cannot be combined with mode: the guest reaches the cached "
       "blob through a read-only share, where its mode cannot be set | hint: remove mode (a "
       "shared model needs none), or remove share"},
      {"not a boolean",
       "  - {url: https://a.io/m, dest: /d, share: yes}\n",
       "r.yaml:3:44: install[0].share: must be true or false | hint: share: true keeps a model in "
       "the host's cache"},
      {"a list",
       "  - {url: https://a.io/m, dest: /d, share: [true]}\n",
       "r.yaml:3:44: install[0].share: must be true or false | hint: share: true keeps a model in "
       "the host's cache"},
  };
  for (const auto& c : cases) {
    auto r = with_install(c.install);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.error().message() + " | hint: " + r.error().hint(), c.message) << c.name;
  }
}

} // namespace
} // namespace lume_unlock::recipe

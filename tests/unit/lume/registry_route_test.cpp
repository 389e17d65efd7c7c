// Where Lume's registry requests really go: https only (ImageContainerRegistry.swift), and
// config.yaml's registry in place of ghcr.io/trycua (RegistryFactory.createRegistry).
#include "lume/registry_image.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::lume {
namespace {

TEST(RegistryRoute, OnlyHttpsRegistriesMaySeeLume) {
  EXPECT_TRUE(require_https_registry("https://127.0.0.1:5000", "pull").ok());
  auto plain = require_https_registry("http://127.0.0.1:5000", "pull of 'x'");
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.error().category(), ErrorCategory::usage);
  EXPECT_EQ(plain.error().why(),
            "Lume pulls and pushes only over https, and http://127.0.0.1:5000 is a plain-HTTP "
            "(--insecure-registry) registry");
}

TEST(RegistryRoute, TheConfiguredRegistryReplacesOnlyTheDefaults) {
  const LumeImage on_defaults{"ghcr.io", "trycua", "macos-tahoe-cua", "latest"};
  const LumeImage elsewhere{"registry.lan:5000", "trycua", "macos-tahoe-cua", "latest"};
  const LumeImage other_org{"ghcr.io", "acme", "macos-tahoe-cua", "latest"};
  const RegistrySetting defaults;
  const RegistrySetting moved{"ghcr", "registry.lan:5000", "lab"};
  const RegistrySetting gcs{"gcs", "ghcr.io", "trycua"};

  EXPECT_TRUE(require_no_registry_override(on_defaults, defaults, "pull").ok());
  EXPECT_TRUE(require_no_registry_override(elsewhere, moved, "pull").ok());
  EXPECT_TRUE(require_no_registry_override(other_org, moved, "pull").ok());

  auto refused = require_no_registry_override(on_defaults, moved, "pull of 'x'");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().category(), ErrorCategory::usage);
  EXPECT_EQ(refused.error().why(),
            "Lume replaces ghcr.io/trycua with the registry in its config.yaml "
            "(registry.ghcr.registry: registry.lan:5000, registry.ghcr.organization: lab), so it "
            "would not fetch the image checked here");
  auto gcs_refused = require_no_registry_override(on_defaults, gcs, "pull of 'x'");
  ASSERT_FALSE(gcs_refused.ok());
  EXPECT_NE(gcs_refused.error().why().find("(registry.type: gcs)"), std::string::npos);
}

} // namespace
} // namespace lume_unlock::lume

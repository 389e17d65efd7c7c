#include "lume/registry_route.hpp"

#include "util/text.hpp"

namespace lume_unlock::lume {

Status require_https_registry(const std::string& registry_url, const std::string& what) {
  if (util::starts_with(registry_url, "https://")) {
    return ok_status();
  }
  return Error(ErrorCategory::usage,
               what,
               "Lume pulls and pushes only over https, and " + registry_url +
                   " is a plain-HTTP (--insecure-registry) registry",
               "serve the registry with TLS on a certificate the Mac trusts (its keychain), and "
               "drop --insecure-registry for it");
}

Status require_no_registry_override(const LumeImage& image,
                                    const RegistrySetting& setting,
                                    const std::string& what) {
  const RegistrySetting defaults;
  const bool names_defaults =
      image.registry == defaults.registry && image.organization == defaults.organization;
  const bool overridden = setting.type != defaults.type || setting.registry != defaults.registry ||
                          setting.organization != defaults.organization;
  if (!names_defaults || !overridden) {
    return ok_status();
  }
  const std::string configured = setting.type == defaults.type
                                     ? "registry.ghcr.registry: " + setting.registry +
                                           ", registry.ghcr.organization: " + setting.organization
                                     : "registry.type: " + setting.type;
  return Error(ErrorCategory::usage,
               what,
               "Lume replaces " + defaults.registry + "/" + defaults.organization +
                   " with the registry in its config.yaml (" + configured +
                   "), so it would not fetch the image checked here",
               "remove the registry block from Lume's ~/.config/lume/config.yaml (then restart "
               "`lume serve`), or publish the image under another organization");
}

} // namespace lume_unlock::lume

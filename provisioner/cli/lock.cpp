// `lock` and `resolve`: a recipe's references, or one reference, resolved to verified digests.
#include "apply/artifact_stage.hpp"
#include "cli/commands.hpp"
#include "cli/progress_renderer.hpp"
#include "fetch/fetch.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "provenance/provenance.hpp"
#include "recipe/recipe.hpp"
#include "util/atomic_file.hpp"
#include "util/http_client.hpp"
#include "util/size.hpp"

#include <algorithm>
#include <memory>
#include <vector>

namespace lume_unlock::cli {

namespace {

struct LockOptions {
  std::string recipe_path;
  RegistryFlags registry;
};

/// The programs an archive's `files:` pins must load on the recipe's macOS (source.macos);
/// without it the check is skipped, with a note saying so.
void check_program_loads(const recipe::Recipe& loaded,
                         const recipe::LockFile& lock,
                         fetch::BlobCache& cache,
                         const fetch::FetchServices& services,
                         Context& context) {
  const bool pins_programs =
      std::any_of(loaded.install.begin(), loaded.install.end(), [](const auto& item) {
        return !item.file_sha256.empty();
      });
  if (!pins_programs) {
    return;
  }
  if (!loaded.source.macos) {
    context.note("not checked: whether the programs of install: files: load on the guest's macOS "
                 "(the recipe names no source.macos, the image's macOS version)");
    return;
  }
  const auto staging = apply::StagingArea::create(cache).value_or_throw();
  for (const std::string& line :
       apply::check_pinned_programs(
           loaded, lock.artifacts, cache, services, staging, *loaded.source.macos)
           .value_or_throw()) {
    context.note("checked: " + line);
  }
}

void run_lock(const LockOptions& options, Context& context) {
  const recipe::Recipe loaded = recipe::load_recipe(options.recipe_path).value_or_throw();
  recipe::LockFile lock;
  lock.recipe_path = options.recipe_path;
  lock.recipe_sha256 = loaded.sha256;
  lock.created_at = provenance::rfc3339_now();
  const oci::RegistryClientOptions registry = registry_client_options(options.registry, &loaded);
  oci::RegistryClient client(registry);
  // The one reference a recipe has.
  if (loaded.source.image) {
    const std::string field = "source.image";
    auto ref = oci::parse_reference(*loaded.source.image);
    if (!ref) {
      throw ref.error().with_context("'" + options.recipe_path + "' field '" + field + "'");
    }
    context.note("resolving " + field + " " + ref.value().str());
    oci::FetchedManifest fetched = client.get_manifest(ref.value()).value_or_throw();
    recipe::LockedReference& locked = lock.references.emplace_back();
    locked.field = field;
    locked.reference = *loaded.source.image;
    locked.digest = fetched.digest.str();
    locked.pinned = ref.value().pinned(fetched.digest).str();
    locked.media_type = fetched.media_type;
  }
  if (!loaded.install.empty()) {
    fetch::BlobCache cache(fetch::BlobCache::default_root().value_or_throw());
    util::HttpClient http(artifact_http_options(registry));
    ProgressRenderer renderer(context);
    context.note("fetching " + std::to_string(loaded.install.size()) +
                 " install: artifact(s) to pin their digests");
    const fetch::FetchServices services{
        http,
        &client,
        renderer.callback(),
        fetch::MirrorMap::from_environment(context.global.mirrors).value_or_throw(),
        fetch::hugging_face_token_from_environment().value_or_throw()};
    lock.artifacts = apply::lock_artifacts(loaded, cache, services).value_or_throw();
    check_program_loads(loaded, lock, cache, services, context);
  }
  const std::string lock_path = recipe::lock_path_for(options.recipe_path);
  // Re-locking pins the references again; the images baked from this recipe stay on record.
  if (auto existing = recipe::load_lock_file(lock_path); existing.ok()) {
    lock.baked = existing.value().baked;
  }
  recipe::write_lock_file(lock_path, lock).value_or_throw();
  if (context.json()) {
    nlohmann::json document = recipe::to_json(lock);
    document["lock_file"] = lock_path;
    context.print_json(document);
    return;
  }
  context.out << "wrote " << lock_path << '\n';
  for (const auto& r : lock.references) {
    context.out << "  " << r.field << ": " << r.reference << " -> " << r.digest << '\n';
  }
  for (const auto& a : lock.artifacts) {
    context.out << "  " << a.field << ": " << a.source << " -> sha256:" << a.sha256 << " ("
                << util::format_size(a.size) << ")\n";
  }
}

struct ResolveOptions {
  std::string reference;
  RegistryFlags registry;
};

void run_resolve(const ResolveOptions& options, Context& context) {
  oci::Reference ref = oci::parse_reference(options.reference).value_or_throw();
  oci::RegistryClient client(registry_client_options(options.registry));
  context.debug("resolving " + ref.str() + " via " + client.base_url(ref.registry));
  oci::FetchedManifest fetched = client.get_manifest(ref).value_or_throw();
  if (context.json()) {
    context.print_json({{"reference", ref.str()},
                        {"digest", fetched.digest.str()},
                        {"media_type", fetched.media_type},
                        {"size", fetched.bytes.size()},
                        {"pinned", ref.pinned(fetched.digest).str()}});
  } else {
    context.out << fetched.digest.str() << '\n';
  }
}

} // namespace

void register_lock(CLI::App& app, Context& context) {
  auto options = std::make_shared<LockOptions>();
  CLI::App* command = app.add_subcommand(
      "lock",
      "Resolve a recipe's image references and install: artifacts to digests and write its lock "
      "file");
  command->footer("Writes RECIPE's lock next to it (name.yaml -> name.lock.json): the recipe's "
                  "SHA-256, every reference pinned to a verified manifest digest, and every "
                  "install: artifact fetched into the cache and pinned to its SHA-256. With "
                  "source.macos, each program an archive's files: pins must load on that macOS "
                  "(exit 6 if it is built for a newer one).");
  command->add_option("RECIPE", options->recipe_path, "Recipe YAML file")->required();
  add_registry_flags(*command, options->registry);
  command->callback([options, &context] { run_lock(*options, context); });
}

void register_resolve(CLI::App& app, Context& context) {
  auto options = std::make_shared<ResolveOptions>();
  CLI::App* command =
      app.add_subcommand("resolve", "Print the verified manifest digest of an image reference");
  command->footer("The digest is computed from the manifest bytes and checked against the "
                  "registry's Docker-Content-Digest.\nExample: lume-unlock resolve "
                  "ghcr.io/trycua/macos-tahoe-cua:latest");
  command->add_option("REF", options->reference, "[registry/]repository[:tag][@sha256:...]")
      ->required();
  add_registry_flags(*command, options->registry);
  command->callback([options, &context] { run_resolve(*options, context); });
}

} // namespace lume_unlock::cli

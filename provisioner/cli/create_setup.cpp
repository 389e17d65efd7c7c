#include "cli/create_setup.hpp"

#include "bundle/bundle.hpp"
#include "cli/commands.hpp"
#include "cli/host_bench.hpp"
#include "cli/plan_runner.hpp"
#include "fetch/fetch.hpp"
#include "lume/types.hpp"
#include "pipeline/golden.hpp"
#include "recipe/recipe.hpp"
#include "transfer/shim_bundle.hpp"
#include "util/http_client.hpp"

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace lume_unlock::cli {

namespace {

/// $LUME_UNLOCK_TEST_PROBE_ENV ("K=V[,K=V]…"): extra environment for the unlocked probe run,
/// for tests that need a shim that stays inert. Not a user feature.
/// --bench: the recipe's bench: block as the pipeline runs it, its host_json and host_perplexity
/// read now, so a missing block or a bad file costs nothing.
std::optional<pipeline::BenchOptions> recipe_bench(const CreateSetup& setup,
                                                   const std::optional<recipe::Recipe>& recipe) {
  if (!setup.bench) {
    return std::nullopt;
  }
  if (!recipe || !recipe->bench) {
    throw Error(ErrorCategory::usage,
                "--bench",
                recipe ? "the recipe '" + recipe->path + "' has no bench: block"
                       : std::string("there is no recipe to take the bench from"),
                "add one to the recipe, e.g. 'bench: {model: /Users/lume/models/model.gguf, "
                "min_speedup: 5}' (image-recipes/README.md), or measure a VM with "
                "'lume-unlock bench NAME --model PATH'");
  }
  pipeline::BenchOptions bench = pipeline::bench_options_from_recipe(*recipe->bench);
  const std::string field = "recipe '" + recipe->path + "' field 'bench.";
  if (const auto host = recipe::bench_host_json_file(*recipe).value_or_throw()) {
    read_host_bench(bench, *host, field + "host_json'", "recipe bench.host_json " + *host);
  }
  if (const auto host = recipe::bench_host_perplexity_file(*recipe).value_or_throw()) {
    read_host_perplexity(bench, *host, field + "host_perplexity'");
  }
  return bench;
}

std::map<std::string, std::string> test_probe_env() {
  std::map<std::string, std::string> env;
  const char* value = std::getenv("LUME_UNLOCK_TEST_PROBE_ENV");
  std::stringstream list(value != nullptr ? value : "");
  std::string item;
  while (std::getline(list, item, ',')) {
    const auto eq = item.find('=');
    if (eq != std::string::npos && eq > 0) {
      env[item.substr(0, eq)] = item.substr(eq + 1);
    }
  }
  return env;
}

/// --recipe, or for a clone without it the recipe the golden VM's record names.
std::string recipe_path_for(const CreateSetup& setup, bool cloning, const std::string& state_dir) {
  return !setup.recipe.empty() || !cloning ? setup.recipe
                                           : pipeline::golden_recipe_path(state_dir, setup.from);
}

} // namespace

void add_create_setup_options(CLI::App& command, CreateSetup& setup) {
  command.add_option("--from",
                     setup.from,
                     "Image reference (overrides the recipe's), or the name of a stopped, verified "
                     "VM to clone (no ':', '/' or '@': see 'lume-unlock clone')");
  command.add_option(
      "--bundle", setup.bundle, "Shim bundle directory, archive, or REF@sha256:… in a registry");
  command
      .add_option("--ssh-wait",
                  setup.ssh_wait_seconds,
                  "Seconds to retry the first SSH login after Lume reports SSH open")
      ->capture_default_str();
  command.add_flag("--bench",
                   setup.bench,
                   "Run the recipe's bench: block last (llama-bench stock and unlocked, gated; "
                   "exit 6 when a figure falls short)");
  add_registry_flags(command, setup.registry);
  add_connection_options(command, setup.connection);
}

std::string resume_flags(const CreateSetup& setup) {
  return resume_flag("--from", setup.from) + resume_flag("--bundle", setup.bundle) +
         (setup.bench ? " --bench" : "");
}

void with_create_services(const CreateSetup& setup,
                          Context& context,
                          const std::function<void(CreateServicesInUse&)>& body) {
  // The one load of the recipe: its shim.bundle chooses the bundle, and the pipeline plans with it.
  const bool cloning = !setup.from.empty() && pipeline::names_a_vm(setup.from);
  const std::string recipe_path = recipe_path_for(setup, cloning, context.global.state_dir);
  std::optional<recipe::Recipe> recipe;
  if (!recipe_path.empty()) {
    recipe = recipe::load_recipe(recipe_path).value_or_throw();
  }
  const std::optional<pipeline::BenchOptions> bench = recipe_bench(setup, recipe);
  const transfer::BundleLocation choice = transfer::locate_bundle(
      setup.bundle.empty() ? std::nullopt : std::optional<std::string>(setup.bundle),
      recipe ? recipe->shim.bundle : std::nullopt);
  // The recipe's trust: keys, read before anything is fetched: the bundle and the image must
  // both carry a signature by one of them.
  const std::vector<signing::TrustedKey> trusted_keys =
      recipe ? recipe::load_trusted_keys(*recipe).value_or_throw()
             : std::vector<signing::TrustedKey>{};
  const oci::RegistryClientOptions registry_options =
      registry_client_options(setup.registry, recipe ? &*recipe : nullptr);
  oci::RegistryClient registry(registry_options);
  // The install: block's artifacts: fetched over TLS with the registry's CA rules, cached.
  std::optional<fetch::BlobCache> cache;
  std::optional<util::HttpClient> artifact_http;
  if (recipe && !recipe->install.empty()) {
    cache.emplace(fetch::BlobCache::default_root().value_or_throw());
    artifact_http.emplace(artifact_http_options(registry_options));
  }
  const transfer::LocatedBundle located =
      transfer::load_located_bundle(choice, registry, trusted_keys).value_or_throw();
  const bundle::LoadedBundle& bundle = located.bundle;
  context.debug("shim bundle " + bundle.manifest().version + " from " + choice.source + ": " +
                choice.path);

  ProgressRenderer renderer(context);

  pipeline::CreateOptions create;
  create.vm = lume::VmName::parse(setup.vm).value_or_throw(); // the edge: parsed once
  if (recipe) {
    create.recipe = recipe;
    create.recipe_path = recipe_path;
  }
  if (cloning) {
    create.clone_source = lume::VmName::parse(setup.from).value_or_throw();
  } else if (!setup.from.empty()) {
    create.from = setup.from;
  }
  create.lume_url = context.global.lume_url;
  create.state_dir = context.global.state_dir;
  create.bundle_source = choice.source;
  create.bundle_artifact = located.artifact;
  create.trusted_keys = trusted_keys;
  if (located.signature) {
    create.bundle_signed_by = located.signature->key_fingerprint;
  }
  create.probe_extra_env = test_probe_env();
  // A guest that mounts Lume's shares elsewhere than macOS's automount (the stand-in guest).
  if (const char* root = std::getenv("LUME_UNLOCK_GUEST_SHARE_ROOT"); root && *root) {
    create.guest_share_root = root;
  }
  create.ssh_wait = std::chrono::seconds(setup.ssh_wait_seconds);
  create.bench = bench;

  pipeline::CreateServices services{
      context.lume(),
      registry,
      bundle,
      [&]() -> std::unique_ptr<guest::GuestSession> {
        return context.open_guest(setup.vm, setup.connection);
      },
      renderer.callback(),
      [&](const std::string& warning) { context.warn(warning); },
      cache ? &*cache : nullptr,
      artifact_http ? &*artifact_http : nullptr,
      fetch::MirrorMap::from_environment(context.global.mirrors).value_or_throw(),
      fetch::hugging_face_token_from_environment().value_or_throw()};
  CreateServicesInUse use{create, services, renderer};
  body(use);
}

} // namespace lume_unlock::cli

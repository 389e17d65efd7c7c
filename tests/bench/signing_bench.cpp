// What signing adds to bake and verifying adds to pull, against a loopback docker-registry
// serving TLS, in the same run as the unsigned work each one rides on:
//   BM_BakePushResolve        push a manifest never pushed before, then resolve its tag to a
//                             digest (find_manifest, as bake's push check does)
//   BM_BakePushResolveSign    the same, then signing::sign_image (fetch the manifest, sign the
//                             payload, push payload blob + config + the .sig manifest)
//   BM_PullResolve            resolve a signed image's tag to its digest (head_manifest, as
//                             pull's digest resolution does)
//   BM_PullResolveVerify      the same, then signing::verify_image_signature
// The added time is the difference of the medians of each pair. Run manually, e.g.:
//   build/tests/bench/signing_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only
// ctest runs it once, briefly, as a smoke test only. Exit 77 (skipped) without docker-registry,
// unless CI=true.
#include "oci/manifest.hpp"
#include "oci/registry_client.hpp"
#include "signing/signing.hpp"
#include "support/process.hpp"
#include "support/registry_server.hpp"
#include "util/ecdsa_key.hpp"

#include <benchmark/benchmark.h>

#include <iostream>
#include <optional>

namespace {

using namespace lume_unlock;

struct Setup {
  std::unique_ptr<test::RegistryServer> server;
  std::unique_ptr<oci::RegistryClient> client;
  std::optional<util::EcdsaPrivateKey> key;
  std::vector<signing::TrustedKey> trusted;
  oci::Reference repository;
  oci::Descriptor layer;                    ///< shared by every manifest (pushed once)
  std::optional<oci::Reference> signed_tag; ///< a signed image, by tag, for the pull pair
  std::uint64_t pushed = 0;
};

Setup* g_setup = nullptr;

oci::Reference tagged(const oci::Reference& repository, const std::string& tag) {
  oci::Reference ref = repository;
  ref.tag = tag;
  ref.digest.reset();
  return ref;
}

/// Pushes a manifest no earlier call pushed (its config blob names a counter) under a fresh tag
/// and resolves the tag as bake's push check does. Returns the image pinned by digest.
Result<oci::Reference> push_fresh_and_resolve(Setup& s) {
  const std::string n = std::to_string(++s.pushed);
  const oci::Reference tag = tagged(s.repository, "v" + n);
  const std::string config =
      R"({"mediatype":"application/vnd.trycua.lume.config.v1+json","bench":)" + n + "}";
  oci::Manifest manifest;
  manifest.media_type = oci::media_type::oci_manifest;
  LUME_UNLOCK_TRY_ASSIGN(manifest.config,
                         s.client->push_blob_bytes(tag, config, oci::media_type::lume_config));
  manifest.layers.push_back(s.layer);
  LUME_UNLOCK_TRY(
      s.client->push_manifest(tag, oci::serialize(manifest), oci::media_type::oci_manifest));
  LUME_UNLOCK_TRY_ASSIGN(auto head, s.client->find_manifest(tag));
  if (!head) {
    return Error(ErrorCategory::registry, "bench push", "the pushed tag does not resolve", "");
  }
  return tag.pinned(head->digest);
}

void BM_BakePushResolve(benchmark::State& state) {
  for (auto _ : state) {
    auto pinned = push_fresh_and_resolve(*g_setup);
    if (!pinned) {
      state.SkipWithError(pinned.error().message().c_str());
      return;
    }
  }
}

void BM_BakePushResolveSign(benchmark::State& state) {
  for (auto _ : state) {
    auto pinned = push_fresh_and_resolve(*g_setup);
    if (!pinned) {
      state.SkipWithError(pinned.error().message().c_str());
      return;
    }
    auto signed_ = signing::sign_image(
        *g_setup->client, pinned.value(), *g_setup->key, {{"lume-unlock", "bench"}});
    if (!signed_ || signed_.value().already_signed || signed_.value().signature_count != 1) {
      state.SkipWithError(signed_ ? "the fresh image was signed already"
                                  : signed_.error().message().c_str());
      return;
    }
  }
}

/// The digest of the signed image's tag (pull's digest resolution).
Result<oci::Reference> resolve_signed(Setup& s) {
  LUME_UNLOCK_TRY_ASSIGN(auto head, s.client->head_manifest(*s.signed_tag));
  return s.signed_tag->pinned(head.digest);
}

void BM_PullResolve(benchmark::State& state) {
  for (auto _ : state) {
    auto pinned = resolve_signed(*g_setup);
    if (!pinned) {
      state.SkipWithError(pinned.error().message().c_str());
      return;
    }
  }
}

void BM_PullResolveVerify(benchmark::State& state) {
  for (auto _ : state) {
    auto pinned = resolve_signed(*g_setup);
    if (!pinned) {
      state.SkipWithError(pinned.error().message().c_str());
      return;
    }
    auto verified =
        signing::verify_image_signature(*g_setup->client, pinned.value(), g_setup->trusted);
    if (!verified) {
      state.SkipWithError(verified.error().message().c_str());
      return;
    }
  }
}

BENCHMARK(BM_BakePushResolve)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BakePushResolveSign)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PullResolve)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PullResolveVerify)->Unit(benchmark::kMillisecond)->UseRealTime();

/// The registry, a key, the shared layer and one signed image for the pull pair.
Result<bool> prepare(Setup& s) {
  LUME_UNLOCK_TRY_ASSIGN(auto key, util::EcdsaPrivateKey::generate());
  s.trusted.push_back({key.public_key(), "bench key"});
  s.key = std::move(key);
  s.client = std::make_unique<oci::RegistryClient>(s.server->client_options());
  LUME_UNLOCK_TRY_ASSIGN(s.repository,
                         oci::parse_reference(s.server->host() + "/bench/signed:latest"));
  LUME_UNLOCK_TRY_ASSIGN(s.layer,
                         s.client->push_blob_bytes(s.repository,
                                                   std::string(64 * 1024, 'd'),
                                                   oci::media_type::lume_disk));
  LUME_UNLOCK_TRY_ASSIGN(auto pinned, push_fresh_and_resolve(s));
  LUME_UNLOCK_TRY(signing::sign_image(*s.client, pinned, *s.key));
  s.signed_tag = tagged(s.repository, "v" + std::to_string(s.pushed));
  return true;
}

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 2;
  }
  Setup setup;
  std::string why_not;
  setup.server = test::RegistryServer::start(why_not);
  if (!setup.server) {
    std::cerr << "signing_bench: skipped: " << why_not << '\n';
    return test::running_in_ci() ? 1 : 77;
  }
  auto prepared = prepare(setup);
  if (!prepared) {
    std::cerr << "signing_bench: " << prepared.error().message() << '\n';
    return 1;
  }
  g_setup = &setup;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

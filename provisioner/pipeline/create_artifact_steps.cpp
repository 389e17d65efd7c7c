// Part of CreatePipeline (pipeline/create.hpp): the recipe's install: items, fetched onto the
// host before the image (verified, from the cache or the network) and put into the guest after
// the probe. Each step describes its own part of the plan beside the work it does.

#include "enablement/guest_layout.hpp"
#include "pipeline/artifact_plan.hpp"
#include "pipeline/create.hpp"
#include "util/text.hpp"

namespace lume_unlock::pipeline {

Step CreatePipeline::fetch_step() {
  if (m_services.cache == nullptr || m_services.artifact_http == nullptr) {
    throw Error(ErrorCategory::failure,
                "create '" + m_options.vm.str() + "'",
                "the recipe has an install: block but no artifact cache was set up");
  }
  const recipe::LockFile* lock = m_lock ? &*m_lock : nullptr;
  for (auto& warning : unpinned_warnings(m_recipe, lock)) {
    m_outcome.warnings.push_back(std::move(warning));
  }
  return {"fetch",
          describe_fetch(m_recipe, lock, m_services.cache),
          std::nullopt,
          all_cached(m_recipe, lock, m_services.cache) ? "all in the cache" : "some to download",
          [this] { return step_fetch(); }};
}

StepResult CreatePipeline::step_fetch() {
  m_staging.emplace(apply::StagingArea::create(*m_services.cache).value_or_throw());
  fetch::FetchServices services{*m_services.artifact_http,
                                &m_services.registry,
                                m_services.progress,
                                m_services.mirrors,
                                m_services.hugging_face_token};
  m_outcome.fetched =
      apply::stage_artifacts(
          m_recipe, m_lock ? &*m_lock : nullptr, *m_services.cache, services, *m_staging)
          .value_or_throw();
  // Before the image: a program the archives do not hold fails now, not after a long pull.
  apply::check_enabled_programs(m_outcome.fetched, m_recipe.enablement).value_or_throw();
  // Changed: something came from the network (a host file is read in place, not fetched).
  bool downloaded = false;
  for (const auto& artifact : m_outcome.fetched) {
    downloaded = downloaded || artifact.fetched.network_bytes != 0 ||
                 (!artifact.fetched.from_cache &&
                  artifact.item.source.kind != fetch::ArtifactSource::Kind::file);
  }
  return {downloaded, summarize_fetch(m_outcome.fetched)};
}

Step CreatePipeline::install_artifacts_step() {
  const std::string dests =
      util::join(m_recipe.install, ", ", [](const auto& item) { return item.dest; });
  return {"install",
          "put the fetched artifacts into the guest (" + dests +
              "): files that differ streamed over SFTP, checked by SHA-256, moved into "
              "place all or none",
          std::nullopt,
          "",
          [this] { return step_install_artifacts(); }};
}

StepResult CreatePipeline::step_install_artifacts() {
  // The support folder's staging root: on the home's volume, as the destinations normally are.
  const std::string scratch = enablement::support_dir_of_home(m_facts->home) + "/staging";
  const bool link_shared = !m_options.copy_shared && apply::any_shared(m_outcome.fetched);
  std::vector<apply::StagedArtifact> copied;
  for (const auto& artifact : m_outcome.fetched) {
    if (!link_shared || !artifact.item.share) {
      copied.push_back(artifact);
    }
  }
  apply::ArtifactInstallReport report =
      apply::install_artifacts(
          *m_session, copied, m_outcome.shim->installed, scratch, m_services.progress)
          .value_or_throw();
  std::string summary = summarize_install(report);
  if (link_shared) {
    const apply::SharedLinkReport links =
        apply::link_shared_artifacts(
            *m_session, m_outcome.fetched, *m_services.cache, m_options.guest_share_root, scratch)
            .value_or_throw();
    report.records = apply::in_recipe_order(m_outcome.fetched, report.records, links.records);
    summary += "; " + summarize_links(links);
    m_outcome.artifacts = report;
    m_staging.reset();
    return {report.changed() || links.changed(), summary};
  }
  if (m_options.copy_shared && apply::any_shared(m_outcome.fetched)) {
    summary += "; share: true items copied into the VM (an image must be complete)";
  }
  m_outcome.artifacts = report;
  m_staging.reset(); // the unpacked trees are in the guest now
  return {report.changed(), summary};
}

} // namespace lume_unlock::pipeline

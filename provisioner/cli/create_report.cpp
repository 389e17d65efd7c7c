#include "cli/create_setup.hpp"
#include "cli/host_bench.hpp"
#include "cli/plan_runner.hpp"

#include <algorithm>
#include <string>

namespace lume_unlock::cli {

namespace {

/// The highest Apple family a probe answered true, its threadgroup memory and the shim state.
/// The probe's JSON comes from the guest: a field of the wrong type reads as absent, never as
/// an exception (issue 27).
nlohmann::json probe_summary(const nlohmann::json& doc) {
  int highest = 0;
  if (doc.is_object() && doc.contains("families") && doc["families"].is_object()) {
    for (const auto& [code, answer] : doc["families"].items()) {
      const bool digits = !code.empty() && code.size() <= 4 &&
                          code.find_first_not_of("0123456789") == std::string::npos;
      const int value = digits ? std::stoi(code) : 0;
      if (value >= 1001 && value <= 1999 && answer.is_boolean() && answer.get<bool>()) {
        highest = std::max(highest, value);
      }
    }
  }
  const bool has_memory = doc.is_object() && doc.contains("max_threadgroup_memory") &&
                          doc["max_threadgroup_memory"].is_number_unsigned();
  const auto state = doc.is_object() && doc.contains("shim") && doc["shim"].is_object() &&
                             doc["shim"].contains("state") && doc["shim"]["state"].is_string()
                         ? doc["shim"]["state"].get<std::string>()
                         : std::string("absent");
  return {{"highest_apple_family", highest},
          {"max_threadgroup_memory",
           has_memory ? doc["max_threadgroup_memory"].get<std::uint64_t>() : 0ULL},
          {"shim", state}};
}

/// A clone's source and the image it inherited (no image step ran).
void add_clone_json(const pipeline::CreateOutcome& o, nlohmann::json& doc) {
  if (!o.cloned_from) {
    return;
  }
  doc["cloned_from"] = {{"vm", o.cloned_from->vm.value_or("")},
                        {"record_sha256", o.cloned_from->record_sha256.value_or("")},
                        {"ssh_host_key", o.cloned_from->ssh_host_key.value_or("")}};
  if (o.inherited_image && o.inherited_image->digest) {
    doc["image"] = {{"reference", o.inherited_image->reference.value_or("")},
                    {"digest", *o.inherited_image->digest},
                    {"changed", false}};
  }
}

} // namespace

nlohmann::json create_outcome_json(const pipeline::CreatePipeline& pipeline,
                                   const std::string& bundle_source) {
  const pipeline::CreateOutcome& o = pipeline.outcome();
  nlohmann::json doc;
  doc["reference"] = o.reference;
  doc["locked"] = o.locked;
  if (o.image) {
    doc["image"] = {{"reference", o.image->reference},
                    {"digest", o.image->digest.str()},
                    {"lume_manifest_digest", o.image->lume_manifest_digest},
                    {"changed", o.image->changed}};
  }
  add_clone_json(o, doc);
  if (o.shim) {
    const auto& s = o.shim->installed;
    nlohmann::json files = nlohmann::json::array();
    files.push_back({{"path", s.shim.path}, {"sha256", s.shim.sha256}});
    for (const auto& f : s.support) {
      files.push_back({{"path", f.path}, {"sha256", f.sha256}});
    }
    if (s.probe) {
      files.push_back({{"path", s.probe->path}, {"sha256", s.probe->sha256}});
    }
    doc["shim"] = {{"platform", s.platform},
                   {"bundle_version", s.bundle_version},
                   {"bundle_source", bundle_source},
                   {"changed", o.shim->changed},
                   {"external", s.external},
                   {"files", files}};
  }
  if (o.probe && o.verdict) {
    doc["probe"] = {{"stock", o.probe->stock},
                    {"unlocked", o.probe->unlocked},
                    {"changed_families", o.verdict->changed_families},
                    {"problems", o.verdict->problems}};
  }
  nlohmann::json enabled = nlohmann::json::array();
  for (const auto& entry : pipeline.recipe().enablement.entries) {
    enabled.push_back({{"name", entry.name}, {"program", entry.program}, {"agent", entry.agent}});
  }
  doc["enablement"] = enabled;
  doc["enablement_changes"] = o.enablement_changes;
  // Entries added with `allow` that the recipe does not have: kept, or removed by --exclusive.
  doc["allow_entries"] = {{"kept", o.kept_allow_entries}, {"removed", o.removed_allow_entries}};
  doc["programs"] = program_checks_json(o.program_checks);
  if (!o.fetched.empty()) {
    // The install: items: where each came from (cache or network) and what the guest got.
    nlohmann::json artifacts = nlohmann::json::array();
    for (std::size_t i = 0; i < o.fetched.size(); ++i) {
      const auto& staged = o.fetched[i];
      nlohmann::json item = {{"field", staged.item.field},
                             {"source", staged.source},
                             {"sha256", staged.fetched.sha256},
                             {"size", staged.fetched.size},
                             {"pinned", staged.pinned},
                             {"from_cache", staged.fetched.from_cache},
                             {"network_bytes", staged.fetched.network_bytes},
                             {"dest", staged.item.dest}};
      if (o.artifacts && i < o.artifacts->records.size()) {
        item["files"] = o.artifacts->records[i].files.size();
      }
      artifacts.push_back(item);
    }
    doc["artifacts"] = artifacts;
    if (o.artifacts) {
      doc["artifacts_sent"] = {{"files", o.artifacts->files_sent},
                               {"of", o.artifacts->files_total},
                               {"bytes", o.artifacts->bytes_sent}};
    }
  }
  doc["warnings"] = o.warnings;
  if (o.bench) {
    doc["bench"] = o.bench->record;
  }
  return doc;
}

void print_create_summary(Context& context,
                          const pipeline::CreatePipeline& pipeline,
                          const std::vector<pipeline::StepReport>& reports,
                          const std::string& vm,
                          const std::string& bundle_source) {
  const pipeline::CreateOutcome& o = pipeline.outcome();
  std::ostream& out = context.out;
  out << pipeline::reports_to_text("create '" + vm + "'", reports);
  if (o.cloned_from) {
    out << "cloned from '" << o.cloned_from->vm.value_or("") << "' (record "
        << o.cloned_from->record_sha256.value_or("") << "): its image "
        << (o.inherited_image ? o.inherited_image->digest.value_or("") : std::string())
        << ", and its SSH host key " << o.cloned_from->ssh_host_key.value_or("")
        << " (a copied disk: changing it needs root in the guest)\n";
  }
  if (o.image) {
    out << "image: " << o.image->reference << " " << o.image->digest.str() << "\n";
  }
  if (o.shim) {
    const auto& s = o.shim->installed;
    out << "shim " << s.bundle_version << " (" << s.platform << ", bundle from " << bundle_source
        << "):\n";
    out << "  " << s.shim.sha256 << "  " << s.shim.path
        << (s.external ? " (external: the recipe's shim.dylib)\n" : "\n");
    for (const auto& f : s.support) {
      out << "  " << f.sha256 << "  " << f.path << "\n";
    }
    if (s.probe) {
      out << "  " << s.probe->sha256 << "  " << s.probe->path << "\n";
    }
  }
  if (o.probe && o.verdict) {
    const auto stock = probe_summary(o.probe->stock);
    const auto unlocked = probe_summary(o.probe->unlocked);
    out << "probe: stock Apple " << stock["highest_apple_family"] << ", threadgroup memory "
        << stock["max_threadgroup_memory"] << "; unlocked Apple "
        << unlocked["highest_apple_family"] << ", threadgroup memory "
        << unlocked["max_threadgroup_memory"] << "; changed families:";
    for (const auto& code : o.verdict->changed_families) {
      out << " " << code;
    }
    out << "\n";
  }
  out << "enabled:";
  if (pipeline.recipe().enablement.entries.empty()) {
    out << " (none)";
  }
  for (const auto& entry : pipeline.recipe().enablement.entries) {
    out << " " << entry.name << (entry.agent ? " (agent)" : "");
  }
  out << "\n";
  print_program_checks(out, o.program_checks);
  if (o.bench) {
    out << "bench:\n" << verify::render_bench_table(o.bench->rows) << bench_log_lines(*o.bench);
  }
}

} // namespace lume_unlock::cli

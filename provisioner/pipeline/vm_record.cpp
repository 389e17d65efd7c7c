#include "pipeline/vm_record.hpp"

namespace lume_unlock::pipeline {

namespace {

std::string guest_record_path(const std::string& home) {
  return guest::support_dir_of_home(home) + "/provenance.json";
}

} // namespace

std::optional<provenance::Provenance> current_vm_record(guest::GuestSession& session,
                                                        const std::string& home,
                                                        const std::string& state_dir,
                                                        const std::string& vm) {
  if (auto host = provenance::read_provenance(state_dir, vm); host.ok()) {
    return host.value();
  }
  if (auto text = session.read_file(guest_record_path(home), provenance::k_max_provenance_bytes);
      text.ok()) {
    if (auto parsed = provenance::parse_provenance(text.value()); parsed.ok()) {
      return parsed.value();
    }
  }
  return std::nullopt;
}

Status write_vm_record(guest::GuestSession& session,
                       const std::string& home,
                       const std::string& state_dir,
                       const provenance::Provenance& record) {
  const std::string bytes = provenance::to_json(record).dump(2) + "\n";
  LUME_UNLOCK_TRY(session.upload(bytes, guest_record_path(home), 0644));
  return provenance::write_provenance(state_dir, record);
}

std::map<std::string, std::string>
enablement_origins(const std::optional<provenance::Provenance>& record) {
  std::map<std::string, std::string> origins;
  if (record && record->enablement) {
    for (const auto& entry : *record->enablement) {
      origins[entry.name] = provenance::origin_of(entry);
    }
  }
  return origins;
}

Result<std::vector<provenance::EnablementRecord>>
enablement_records(const enablement::EnablementList& list,
                   const guest::GuestLayout& layout,
                   const enablement::AgentSettings& settings,
                   const std::map<std::string, std::string>& origins) {
  LUME_UNLOCK_TRY_ASSIGN(auto agents, enablement::render_agents(list, layout, settings));
  std::vector<provenance::EnablementRecord> records;
  for (const auto& entry : list.entries) {
    provenance::EnablementRecord record;
    record.name = entry.name;
    record.program = entry.program;
    record.resolved_program = entry.resolved_program;
    record.agent = entry.agent;
    for (const auto& agent : agents) {
      if (agent.name == entry.name) {
        record.plist_sha256 = agent.sha256;
      }
    }
    const auto origin = origins.find(entry.name);
    record.origin = origin == origins.end() ? provenance::k_origin_recipe : origin->second;
    records.push_back(record);
  }
  return records;
}

} // namespace lume_unlock::pipeline

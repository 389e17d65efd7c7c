#include "provenance/record_merge.hpp"

namespace lume_unlock::provenance {

bool same_provenance(const Provenance& a, const Provenance& b) {
  nlohmann::json left = to_json(a);
  nlohmann::json right = to_json(b);
  for (auto* doc : {&left, &right}) {
    doc->erase("created_at");
    doc->erase("updated_at");
  }
  return left == right;
}

Provenance with_pulled_image(Provenance record, const Provenance& pulled) {
  record.vm = pulled.vm;
  record.lume_url = pulled.lume_url;
  record.image = pulled.image;
  record.hardware = pulled.hardware;
  return record;
}

std::optional<Provenance> record_after_pull(const std::optional<Provenance>& existing,
                                            const Provenance& pulled,
                                            const std::string& now) {
  Provenance record = with_pulled_image(existing ? *existing : Provenance{}, pulled);
  if (existing && to_json(record) == to_json(*existing)) {
    return std::nullopt;
  }
  if (!record.created_at) {
    record.created_at = now;
  }
  record.updated_at = now;
  return record;
}

Provenance
adopt_baked_record(const Provenance& baked, const Provenance& pulled, const std::string& now) {
  Provenance adopted = with_pulled_image(baked, pulled);
  if (!same_provenance(adopted, baked)) {
    adopted.created_at = now;
    adopted.updated_at = now;
  }
  return adopted;
}

} // namespace lume_unlock::provenance

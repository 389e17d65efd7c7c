#include "lume/masked_vm.hpp"

namespace lume_unlock::lume {

bool is_sticky_pull_failure(const Error& error) {
  return error.category() == ErrorCategory::lume_api &&
         error.why().find("Pull failed for '") != std::string::npos;
}

Result<std::optional<VmDetails>> find_listed(LumeApi& lume, const std::string& vm) {
  LUME_UNLOCK_TRY_ASSIGN(auto listed, lume.list());
  for (auto& details : listed) {
    if (details.name == vm) {
      return std::optional<VmDetails>(std::move(details));
    }
  }
  return std::optional<VmDetails>();
}

} // namespace lume_unlock::lume

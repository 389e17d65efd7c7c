#pragma once
// What lume-unlock-probe prints (DESIGN §4.5), as pure C++ over plain data: the device glue
// (device_query.h) fills a Report, these functions render it.
#include "runtime/shim_state.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::probe {

enum class ShimState { absent, inert, active };

struct ShimStatus {
  ShimState state = ShimState::absent;
  std::string reason = "not_loaded";                   // policy reason name; "active" when active
  std::optional<std::uint64_t> apple_family_max;       // set when active
  std::optional<std::uint64_t> max_threadgroup_memory; // set when active
  std::optional<bool> children_inherit; // set when loaded: children keep the injection variable
};

struct FamilyAnswer {
  long code = 0;
  bool supported = false;
};

struct Report {
  std::string process;
  std::string arch;
  ShimStatus shim;
  std::optional<std::string> device; // nullopt: no device found
  std::vector<FamilyAnswer> families;
  std::uint64_t max_threadgroup_memory = 0;
  std::uint64_t recommended_max_working_set_size = 0;
};

/// What llama.cpp and MLX would derive from the family answers (metal-capabilities.md §1.2, §3).
struct Derived {
  bool simdgroup_reduction = false; // Apple7 (1007) or Metal3 (5001)
  bool simdgroup_matrix = false;    // Apple7 (1007)
  bool bfloat = false;              // Metal3 (5001) or Apple6 (1006)
  bool residency_sets = false;      // MLX: Metal3 (5001)
};

/// The family codes the probe asks, in order: 1001-1010, 2001-2002, 3001-3003, 4001-4002,
/// 5001-5002.
const std::array<long, 19>& probe_family_codes();

/// The shim's status from lume_unlock_shim_state(); nullptr (symbol not found) means absent.
ShimStatus shim_status_from(const lume_unlock_shim_state_v1* state);

/// The answer recorded for `code`, false when the report lacks it.
bool family_supported(const Report& report, long code);

Derived derive(const Report& report);

/// "arm64e", "arm64" or "x86_64" for the architecture this probe was compiled for.
const char* build_arch();

/// One JSON document with the DESIGN §4.5 keys, newline-terminated.
std::string render_json(const Report& report);

/// The same facts for people, one "label: value" per line.
std::string render_text(const Report& report);

} // namespace lume_unlock::probe

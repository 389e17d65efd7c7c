#pragma once

#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace YAML {
class Node;
}
namespace lume_unlock::util {
class YamlReader;
}

namespace lume_unlock::enablement {

/// The shim's answers for one process (DESIGN §4.1): LUME_METAL_APPLE_FAMILY_MAX and
/// LUME_METAL_MAX_THREADGROUP_MEMORY.
struct Profile {
  std::uint64_t apple_family_max = 1009;
  std::uint64_t max_threadgroup_memory = 65536;

  /// The published, tested profile: Apple family 9, 64 KiB of threadgroup memory.
  static Profile standard() { return Profile{}; }
};
bool operator==(const Profile& a, const Profile& b);
inline bool operator!=(const Profile& a, const Profile& b) {
  return !(a == b);
}

/// Bounds a profile must keep. apple_family_max: the shim stays inert outside 1001..1999.
/// max_threadgroup_memory: the shim only raises the limit, so any positive value is harmless to
/// it; we cap it at 1 GiB because anything near that is a typo (real GPUs report 32–64 KiB).
constexpr std::uint64_t k_min_apple_family_max = 1001;
constexpr std::uint64_t k_max_apple_family_max = 1999;
constexpr std::uint64_t k_min_threadgroup_memory = 1;
constexpr std::uint64_t k_max_threadgroup_memory = 1ULL << 30;

/// One program the shim may enable (DESIGN §6). `agent` entries also get a LaunchAgent;
/// the others are only listed in the guard file and run with `lume-unlock exec`.
struct EnablementEntry {
  std::string name;              ///< [a-z0-9][a-z0-9-]{0,62}; label dev.lume-unlock.<name>
  std::string program;           ///< absolute, normalized path in the guest, as the user wrote it
  std::vector<std::string> args; ///< arguments after the program, passed verbatim
  bool agent = true;             ///< render and load a LaunchAgent
  bool keep_alive = true;        ///< launchd restarts it when it exits (agents only)
  std::map<std::string, std::string>
      env;                        ///< extra environment; DYLD_*, LD_PRELOAD and LUME_* reserved
  std::optional<Profile> profile; ///< per-entry override of the default profile
  /// The program's real path in the guest (every symbolic link resolved, as realpath(3) gives
  /// it), found when the list is applied: the shim compares it with the running executable's
  /// realpath, so the guard file lists this path. Absent in a recipe, in `allow add`'s input
  /// and in lists applied before lume-unlock resolved programs.
  std::optional<std::string> resolved_program;
};
bool operator==(const EnablementEntry& a, const EnablementEntry& b);
inline bool operator!=(const EnablementEntry& a, const EnablementEntry& b) {
  return !(a == b);
}

/// The path the guard file lists for `entry`: its resolved_program, else its program.
const std::string& guarded_path(const EnablementEntry& entry);

/// `entry` without its resolved_program: what the user asked for, to compare with a new wish.
EnablementEntry as_written(EnablementEntry entry);

/// The whole list, in the order the user gave it. Names are unique.
struct EnablementList {
  std::vector<EnablementEntry> entries;

  /// The entry called `name`, or nullptr.
  const EnablementEntry* find(const std::string& name) const;
  /// All names, in list order (for "did you mean" hints).
  std::vector<std::string> names() const;
};
bool operator==(const EnablementList& a, const EnablementList& b);
inline bool operator!=(const EnablementList& a, const EnablementList& b) {
  return !(a == b);
}

/// Which part of an entry a rule violation is about, so a loader can point at the right
/// source location (YAML mark, JSON path).
enum class Field {
  name,
  program,
  arg,       ///< args[arg_index]
  env_key,   ///< the key env_key
  env_value, ///< the value of env_key
  apple_family_max,
  max_threadgroup_memory,
  keep_alive,
  resolved_program,
};

/// One broken rule: the field and the reason, worded to follow "enablement entry '<name>': ".
struct Violation {
  Field field = Field::name;
  std::size_t arg_index = 0;
  std::string env_key;
  std::string reason;
  std::string hint;
};

/// The first rule `entry` breaks, checked in field order (name, program, args, env, profile,
/// keep_alive, resolved_program), or nothing when it is valid. Rules:
/// - name matches [a-z0-9][a-z0-9-]{0,62};
/// - program is absolute and normalized (no empty, '.' or '..' components, no trailing '/' or
///   whitespace), because the shim compares it with the process's resolved executable path;
/// - program, args and env values contain no control character other than tab and are UTF-8;
/// - env keys match [A-Za-z_][A-Za-z0-9_]* and are not reserved (DYLD_*, LUME_*, LD_PRELOAD);
/// - the profile is within the bounds above;
/// - keep_alive is only true for agents;
/// - resolved_program, when present, follows the rules of program.
std::optional<Violation> find_violation(const EnablementEntry& entry);

/// A violation found in a whole list: the entry's position and the violation. Also reports a
/// duplicate name (Field::name on the later entry).
struct ListViolation {
  std::size_t index = 0;
  Violation violation;
};
std::optional<ListViolation> find_violation(const EnablementList& list);

/// "enablement entry '<name>'" with the name quoted for a message.
std::string entry_label(const std::string& name);
/// entry_label of the entry at `index`, or "enablement entry <index + 1>" when it has no name.
std::string entry_label(const EnablementList& list, std::size_t index);

/// The Error for a violation (category usage): "<label>: <reason>" with the violation's hint,
/// and `context` prepended ("recipe.yaml:3:5: ...") when given.
Error violation_error(const std::string& label,
                      const Violation& violation,
                      const std::string& context = {});

/// Ok, or the first violation as an Error (see violation_error).
Status validate(const EnablementEntry& entry);
Status validate(const EnablementList& list);

/// True when `name` is an environment variable name: [A-Za-z_][A-Za-z0-9_]*.
bool is_env_name(const std::string& name);

/// The profile an entry runs with: its own or `default_profile`.
const Profile& effective_profile(const EnablementEntry& entry, const Profile& default_profile);

/// Reads the value of an `enablement:` key (a list of entries; null = empty list) and validates
/// it, failing through `reader`: shape errors as "<source>:<line>:<col>: enablement[1].agent:
/// must be true or false", rule violations as "<source>:<line>:<col>: enablement entry 'x':
/// <reason>" at the offending node. Defaults: args [], agent true, keep_alive = agent, env {},
/// no profile. Scalars are taken as written (a number in args is its text).
EnablementList
read_enablement(const util::YamlReader& reader, const YAML::Node& node, const std::string& field);

/// A `profile:` mapping (apple_family_max, max_threadgroup_memory, each within the bounds of
/// enablement_list.hpp) into `profile`; keys not given keep their value. Returns how many were.
int read_profile(const util::YamlReader& reader,
                 const YAML::Node& node,
                 const std::string& field,
                 Profile& profile);

/// A YAML document whose only key is `enablement:` (launchd/examples/enablement.yaml).
Result<EnablementList> parse_enablement_yaml(std::string_view text, const std::string& source_name);

/// Schema tag of enablement.json.
constexpr const char* k_enablement_schema = "lume-unlock/enablement/v1";

/// {"schema":"lume-unlock/enablement/v1","enablement":[{"name","program","args","agent",
/// "keep_alive","env",("profile"),("resolved_program")}…]} — the fields of DESIGN §6, "profile"
/// only when set, and "resolved_program" (the program's real path, found at apply time) only when
/// resolved; lists written without it stay readable.
nlohmann::json enablement_to_json(const EnablementList& list);

/// The bytes of enablement.json: enablement_to_json indented by 2, keys sorted, UTF-8, a final
/// newline. The same list always gives the same bytes.
std::string render_enablement_json(const EnablementList& list);

/// Reads enablement.json (strict: unknown keys and a different schema are errors) and validates
/// the list. Errors (category usage) read "<source>: /enablement/2/args/0: expected a string, got
/// an integer" for shape problems (util/json_reader) and "<source>: enablement entry 'x': <reason>"
/// for rule violations.
Result<EnablementList> parse_enablement_json(std::string_view text, const std::string& source_name);

} // namespace lume_unlock::enablement

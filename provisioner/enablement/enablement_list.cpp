#include "enablement/enablement_list.hpp"

#include "util/text.hpp"
#include "util/text_check.hpp"
#include "util/yaml_reader.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace lume_unlock::enablement {

namespace {

constexpr std::string_view k_digits = "0123456789";
constexpr std::string_view k_lower = "abcdefghijklmnopqrstuvwxyz";
constexpr std::string_view k_upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

// DYLD_* steer the loader (our injection must be the only one), LUME_* configure the shim and the
// guard, and LD_PRELOAD is the injection variable of Linux guests (guest-sim).
bool is_reserved_env_key(const std::string& key) {
  return util::starts_with(key, "DYLD_") || util::starts_with(key, "LUME_") || key == "LD_PRELOAD";
}

/// No empty, '.' or '..' component (which includes '//' and a trailing '/').
bool is_normalized_absolute(const std::string& path) {
  for (std::size_t start = 1; start <= path.size();) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view component = std::string_view(path).substr(start, end - start);
    if (component.empty() || component == "." || component == "..") {
      return false;
    }
    start = end + 1;
  }
  return true;
}

bool is_valid_name(const std::string& name) {
  return !name.empty() && name.size() <= 63 && name[0] != '-' &&
         name.find_first_not_of(std::string(k_lower) + std::string(k_digits) + "-") ==
             std::string::npos;
}

Violation make(Field field, std::string reason, std::string hint = {}, std::string env_key = {}) {
  Violation v;
  v.field = field;
  v.reason = std::move(reason);
  v.hint = std::move(hint);
  v.env_key = std::move(env_key);
  return v;
}

std::optional<Violation> check_name(const std::string& name) {
  if (name.empty()) {
    return make(Field::name, "name is required", "name each entry, e.g. 'name: llama-server'");
  }
  if (!is_valid_name(name)) {
    return make(Field::name,
                "name must match [a-z0-9][a-z0-9-]{0,62}",
                "use lower-case letters, digits and '-', e.g. 'llama-server'");
  }
  return std::nullopt;
}

std::optional<Violation> check_program(const std::string& program) {
  const std::string full_path_hint =
      "give the program's full path in the guest, e.g. '/opt/llama.cpp/bin/llama-server'";
  if (program.empty()) {
    return make(Field::program, "program is required", full_path_hint);
  }
  // macOS's PATH_MAX (1024, <sys/syslimits.h>) counts the terminating NUL; the guest's exec and
  // the shim's path comparison cannot see a longer path. Checked first: the path is not quoted.
  constexpr std::size_t k_guest_path_max = 1024;
  if (program.size() >= k_guest_path_max) {
    return make(Field::program,
                "program is " + std::to_string(program.size()) +
                    " bytes long, more than the guest's PATH_MAX of " +
                    std::to_string(k_guest_path_max - 1) + " bytes",
                full_path_hint);
  }
  if (auto problem = util::text_problem(program)) {
    return make(Field::program, "program " + *problem);
  }
  if (program[0] != '/') {
    return make(Field::program,
                "program " + util::quote_for_message(program) + " is not an absolute path",
                full_path_hint);
  }
  if (!is_normalized_absolute(program)) {
    return make(Field::program,
                "program " + util::quote_for_message(program) +
                    " is not a normalized path (empty, '.' or '..' component)",
                "the shim compares the resolved executable path; write it without '//', '.', '..' "
                "or a trailing '/'");
  }
  const char last = program.back();
  if (last == ' ' || last == '\t') {
    return make(Field::program,
                "program " + util::quote_for_message(program) + " ends with whitespace");
  }
  return std::nullopt;
}

std::optional<Violation> check_env(const std::string& key, const std::string& value) {
  const std::string quoted = util::quote_for_message(key);
  if (!is_env_name(key)) {
    return make(
        Field::env_key, "env key " + quoted + " must match [A-Za-z_][A-Za-z0-9_]*", {}, key);
  }
  if (is_reserved_env_key(key)) {
    return make(Field::env_key,
                "env key " + quoted +
                    " is reserved (DYLD_*, LD_PRELOAD and LUME_* are set by lume-unlock)",
                "set the shim's answers with 'profile:' instead",
                key);
  }
  if (auto problem = util::text_problem(value)) {
    return make(Field::env_value, "env " + quoted + " value " + *problem, {}, key);
  }
  return std::nullopt;
}

std::optional<Violation> check_profile(const Profile& profile) {
  if (profile.apple_family_max < k_min_apple_family_max ||
      profile.apple_family_max > k_max_apple_family_max) {
    return make(
        Field::apple_family_max,
        "profile apple_family_max " + std::to_string(profile.apple_family_max) + " is outside " +
            std::to_string(k_min_apple_family_max) + ".." + std::to_string(k_max_apple_family_max),
        "the shim stays inert outside that range; 1009 (Apple family 9) is the tested value");
  }
  if (profile.max_threadgroup_memory < k_min_threadgroup_memory ||
      profile.max_threadgroup_memory > k_max_threadgroup_memory) {
    return make(Field::max_threadgroup_memory,
                "profile max_threadgroup_memory " + std::to_string(profile.max_threadgroup_memory) +
                    " is outside " + std::to_string(k_min_threadgroup_memory) + ".." +
                    std::to_string(k_max_threadgroup_memory),
                "65536 (64 KiB) is the tested value");
  }
  return std::nullopt;
}

/// Where each field of one entry was written, so a rule broken later points at its node (the
/// profile is range-checked as it is read; resolved_program is never in YAML).
struct EntryMarks {
  YAML::Mark entry;
  std::map<Field, YAML::Mark> fields; // name, program, keep_alive
  std::vector<YAML::Mark> args;
  std::map<std::string, std::pair<YAML::Mark, YAML::Mark>> env; // key -> (key node, value node)

  YAML::Mark of(const Violation& v) const {
    const auto env_marks = env.find(v.env_key);
    if (v.field == Field::arg && v.arg_index < args.size()) {
      return args[v.arg_index];
    } else if ((v.field == Field::env_key || v.field == Field::env_value) &&
               env_marks != env.end()) {
      return v.field == Field::env_key ? env_marks->second.first : env_marks->second.second;
    }
    const auto mark = fields.find(v.field);
    return mark == fields.end() ? entry : mark->second;
  }
};

EnablementEntry read_entry(const util::YamlReader& p,
                           const YAML::Node& node,
                           const std::string& field,
                           EntryMarks& marks) {
  EnablementEntry entry;
  marks.entry = node.Mark();
  p.mapping(node,
            field,
            {{"name",
              [&](auto& v, auto& g) {
                entry.name = p.text(v, g);
                marks.fields[Field::name] = v.Mark();
              }},
             {"program",
              [&](auto& v, auto& g) {
                entry.program = p.text(v, g);
                marks.fields[Field::program] = v.Mark();
              }},
             {"args",
              [&](const YAML::Node& v, const std::string& g) {
                if (!v.IsNull()) {
                  p.sequence(v, g, [&](auto& item, auto& ig) {
                    entry.args.push_back(p.text(item, ig));
                    marks.args.push_back(item.Mark());
                  });
                }
              }},
             {"agent", [&](auto& v, auto& g) { entry.agent = p.boolean(v, g); }},
             {"keep_alive",
              [&](auto& v, auto& g) {
                entry.keep_alive = p.boolean(v, g);
                marks.fields[Field::keep_alive] = v.Mark();
              }},
             {"env",
              [&](const YAML::Node& v, const std::string& g) {
                if (!v.IsNull()) {
                  p.entries(
                      v, g, [&](const YAML::Node& key_node, const std::string& key, auto& value) {
                        entry.env[key] = p.text(value, g + "." + key);
                        marks.env[key] = {key_node.Mark(), value.Mark()};
                      });
                }
              }},
             {"profile", [&](const YAML::Node& v, const std::string& g) {
                Profile profile;
                if (read_profile(p, v, g, profile) != 2) {
                  p.fail(v, g, "needs both apple_family_max and max_threadgroup_memory");
                }
                entry.profile = profile;
              }}});
  if (marks.fields.count(Field::keep_alive) == 0) {
    entry.keep_alive = entry.agent;
  }
  return entry;
}

} // namespace

bool operator==(const Profile& a, const Profile& b) {
  return a.apple_family_max == b.apple_family_max &&
         a.max_threadgroup_memory == b.max_threadgroup_memory;
}

bool operator==(const EnablementEntry& a, const EnablementEntry& b) {
  const auto fields = [](const EnablementEntry& e) {
    return std::tie(
        e.name, e.program, e.args, e.agent, e.keep_alive, e.env, e.profile, e.resolved_program);
  };
  return fields(a) == fields(b);
}

const std::string& guarded_path(const EnablementEntry& entry) {
  return entry.resolved_program ? *entry.resolved_program : entry.program;
}

EnablementEntry as_written(EnablementEntry entry) {
  entry.resolved_program.reset();
  return entry;
}

bool operator==(const EnablementList& a, const EnablementList& b) {
  return a.entries == b.entries;
}

const EnablementEntry* EnablementList::find(const std::string& name) const {
  for (const EnablementEntry& entry : entries) {
    if (entry.name == name) {
      return &entry;
    }
  }
  return nullptr;
}

std::vector<std::string> EnablementList::names() const {
  std::vector<std::string> result;
  result.reserve(entries.size());
  for (const EnablementEntry& entry : entries) {
    result.push_back(entry.name);
  }
  return result;
}

bool is_env_name(const std::string& name) {
  return !name.empty() && k_digits.find(name[0]) == std::string_view::npos &&
         name.find_first_not_of(std::string(k_lower) + std::string(k_upper) +
                                std::string(k_digits) + "_") == std::string::npos;
}

std::optional<Violation> find_violation(const EnablementEntry& entry) {
  if (auto v = check_name(entry.name)) {
    return v;
  }
  if (auto v = check_program(entry.program)) {
    return v;
  }
  for (std::size_t i = 0; i < entry.args.size(); ++i) {
    if (auto problem = util::text_problem(entry.args[i])) {
      Violation v = make(Field::arg, "args[" + std::to_string(i) + "] " + *problem);
      v.arg_index = i;
      return v;
    }
  }
  for (const auto& [key, value] : entry.env) {
    if (auto v = check_env(key, value)) {
      return v;
    }
  }
  if (entry.profile) {
    if (auto v = check_profile(*entry.profile)) {
      return v;
    }
  }
  if (entry.keep_alive && !entry.agent) {
    return make(Field::keep_alive,
                "keep_alive is true but agent is false",
                "only LaunchAgents are kept alive; set 'keep_alive: false' or 'agent: true'");
  }
  if (entry.resolved_program) {
    if (auto v = check_program(*entry.resolved_program)) {
      v->field = Field::resolved_program;
      v->reason = "resolved_program: " + v->reason;
      return v;
    }
  }
  return std::nullopt;
}

std::optional<ListViolation> find_violation(const EnablementList& list) {
  // Name -> index of its first entry: one lookup per entry keeps long lists linear.
  std::unordered_map<std::string_view, std::size_t> first_with_name;
  first_with_name.reserve(list.entries.size());
  for (std::size_t i = 0; i < list.entries.size(); ++i) {
    if (auto v = find_violation(list.entries[i])) {
      return ListViolation{i, *v};
    }
    const auto [first, inserted] = first_with_name.emplace(list.entries[i].name, i);
    if (!inserted) {
      return ListViolation{i,
                           make(Field::name,
                                "name is used twice (entries " + std::to_string(first->second + 1) +
                                    " and " + std::to_string(i + 1) + ")",
                                "give every entry its own name")};
    }
  }
  return std::nullopt;
}

std::string entry_label(const std::string& name) {
  return "enablement entry " + util::quote_for_message(name);
}

std::string entry_label(const EnablementList& list, std::size_t index) {
  const std::string& name = list.entries.at(index).name;
  return name.empty() ? "enablement entry " + std::to_string(index + 1) : entry_label(name);
}

Error violation_error(const std::string& label,
                      const Violation& violation,
                      const std::string& context) {
  std::string what = label;
  if (!context.empty()) {
    what = context + ": " + what;
  }
  return Error(ErrorCategory::usage, what, violation.reason, violation.hint);
}

Status validate(const EnablementEntry& entry) {
  if (auto v = find_violation(entry)) {
    return violation_error(entry_label(entry.name), *v);
  }
  return ok_status();
}

Status validate(const EnablementList& list) {
  if (auto v = find_violation(list)) {
    return violation_error(entry_label(list, v->index), v->violation);
  }
  return ok_status();
}

const Profile& effective_profile(const EnablementEntry& entry, const Profile& default_profile) {
  return entry.profile ? *entry.profile : default_profile;
}

int read_profile(const util::YamlReader& p,
                 const YAML::Node& node,
                 const std::string& field,
                 Profile& profile) {
  int given = 0;
  const auto bounded = [&](std::uint64_t& into, std::uint64_t min, std::uint64_t max) {
    return [&p, &into, &given, min, max](const YAML::Node& v, const std::string& g) {
      into = static_cast<std::uint64_t>(
          p.integer(v, g, static_cast<long long>(min), static_cast<long long>(max)));
      ++given;
    };
  };
  p.mapping(
      node,
      field,
      {{"apple_family_max",
        bounded(profile.apple_family_max, k_min_apple_family_max, k_max_apple_family_max)},
       {"max_threadgroup_memory",
        bounded(
            profile.max_threadgroup_memory, k_min_threadgroup_memory, k_max_threadgroup_memory)}});
  return given;
}

EnablementList
read_enablement(const util::YamlReader& p, const YAML::Node& node, const std::string& field) {
  EnablementList list;
  if (!node || node.IsNull()) {
    return list;
  }
  if (!node.IsSequence()) {
    p.fail(node, field, "must be a list of entries");
  }
  std::vector<EntryMarks> marks(node.size());
  p.sequence(node, field, [&](const YAML::Node& item, const std::string& item_field) {
    list.entries.push_back(read_entry(p, item, item_field, marks[list.entries.size()]));
  });
  if (auto found = find_violation(list)) {
    const YAML::Mark mark = marks[found->index].of(found->violation);
    throw util::YamlError{
        violation_error(entry_label(list, found->index), found->violation, p.where(mark))};
  }
  return list;
}

Result<EnablementList> parse_enablement_yaml(std::string_view text,
                                             const std::string& source_name) {
  const util::YamlReader p(source_name);
  return p.run([&] {
    const YAML::Node root =
        p.document(text, "the enablement list", "write 'enablement:' and a list of entries");
    EnablementList list;
    bool given = false;
    p.mapping(root, "", {{"enablement", [&](auto& v, auto& g) {
                            list = read_enablement(p, v, g);
                            given = true;
                          }}});
    if (!given) {
      p.fail(root, "enablement", "is required", "write 'enablement:' and a list of entries");
    }
    return list;
  });
}

} // namespace lume_unlock::enablement

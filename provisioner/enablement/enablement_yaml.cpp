#include "enablement_yaml.hpp"

#include <map>

namespace lume_unlock::enablement {

namespace {

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

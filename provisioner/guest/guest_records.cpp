#include "guest/guest_records.hpp"

#include "guest/shell_quote.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <sstream>

namespace lume_unlock::guest {

Result<std::vector<GuestRecord>>
read_guest_records(std::string_view output, const std::string& what, const std::string& hint) {
  auto malformed = [&](const std::string& why) {
    return Error(ErrorCategory::guest, what, why, hint);
  };
  std::vector<GuestRecord> records;
  std::size_t at = 0;
  while (at < output.size()) {
    const std::size_t end = output.find('\n', at);
    if (end == std::string_view::npos) {
      return malformed("unexpected output: a record header without a newline");
    }
    const std::string header(output.substr(at, end - at));
    const std::size_t first = header.find(' ');
    const std::size_t second = first == std::string::npos ? first : header.find(' ', first + 1);
    if (second == std::string::npos) {
      return malformed("unexpected output line " + util::quote_for_message(header));
    }
    const auto size = util::parse_decimal(header.substr(first + 1, second - first - 1));
    if (!size) {
      return malformed("unexpected output line " + util::quote_for_message(header));
    }
    if (*size > output.size() - end - 1) {
      return malformed("output ends inside the record " + util::quote_for_message(header));
    }
    records.push_back({header.substr(0, first),
                       header.substr(second + 1),
                       std::string(output.substr(end + 1, *size))});
    at = end + 1 + *size;
  }
  return records;
}

bool GuestFacts::operator==(const GuestFacts& other) const {
  return product_version == other.product_version && build_version == other.build_version &&
         kernel == other.kernel && machine == other.machine && uid == other.uid &&
         home == other.home;
}

namespace {

constexpr const char* k_facts_what = "reading the guest's facts (sw_vers, uname, id, $HOME)";
constexpr const char* k_facts_hint =
    "check that the guest user's login shell is a POSIX shell (zsh, bash, sh)";

Error bad_facts(const std::string& why) {
  return Error(ErrorCategory::guest, k_facts_what, why, k_facts_hint);
}

const std::string& guest_facts_command() {
  // A missing sw_vers prints nothing (its error goes to /dev/null).
  static const std::string command =
      std::string(k_put_record_function) +
      "put fact product_version \"$(sw_vers -productVersion 2>/dev/null)\"\n"
      "put fact build_version \"$(sw_vers -buildVersion 2>/dev/null)\"\n"
      "put fact kernel \"$(uname -s)\"\nput fact machine \"$(uname -m)\"\n"
      "put fact uid \"$(id -u)\"\nput fact home \"$HOME\"\n";
  return command;
}

} // namespace

Result<GuestFacts> parse_guest_facts(std::string_view output) {
  LUME_UNLOCK_TRY_ASSIGN(auto records, read_guest_records(output, k_facts_what, k_facts_hint));
  std::map<std::string, std::string> values;
  for (auto& record : records) {
    if (record.tag == "fact" && !record.content.empty()) {
      values[record.name] = std::move(record.content);
    }
  }
  auto optional = [&](const char* key) -> std::optional<std::string> {
    const auto it = values.find(key);
    return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  GuestFacts facts;
  facts.product_version = optional("product_version");
  facts.build_version = optional("build_version");
  std::string uid;
  for (auto [key, field] : {std::pair{"kernel", &facts.kernel},
                            std::pair{"machine", &facts.machine},
                            std::pair{"uid", &uid},
                            std::pair{"home", &facts.home}}) {
    const auto value = optional(key);
    if (!value) {
      return bad_facts(std::string("no value for '") + key + "'");
    }
    *field = *value;
  }
  if (facts.home.front() != '/') {
    return bad_facts("$HOME is '" + facts.home + "', not an absolute path");
  }
  const auto number = util::parse_decimal(uid);
  if (!number || *number > 0xffffffffu) {
    return bad_facts("'id -u' printed '" + uid + "', not a number");
  }
  facts.uid = *number;
  return facts;
}

Result<GuestFacts> gather_guest_facts(GuestSession& session) {
  LUME_UNLOCK_TRY_ASSIGN(auto result, session.run(guest_facts_command()));
  if (result.exit_status != 0) {
    return bad_facts("the command exited with status " + std::to_string(result.exit_status) + ": " +
                     result.stderr_text);
  }
  return parse_guest_facts(result.stdout_text);
}

std::map<std::string, std::string> parse_shasum_output(const std::string& output) {
  std::map<std::string, std::string> digests;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.size() > 66 && line[64] == ' ' && (line[65] == ' ' || line[65] == '*') &&
        util::is_sha256_hex(line.substr(0, 64))) {
      digests[line.substr(66)] = line.substr(0, 64);
    }
  }
  return digests;
}

std::string link_state(const std::string& target) {
  return "-> " + target;
}

Result<std::map<std::string, std::string>> hash_guest_files(GuestSession& session,
                                                            const std::vector<std::string>& paths) {
  if (paths.empty()) {
    return std::map<std::string, std::string>{};
  }
  std::vector<std::string> words = {"shasum", "-a", "256"};
  for (const auto& path : paths) {
    // shasum prints a name holding a newline or backslash escaped ("\<hex>  a\nb"): such a
    // line would never match its path, so the file would read as missing. Refuse it instead.
    for (const char c : path) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\') {
        return Error(ErrorCategory::usage,
                     "hashing guest files",
                     "the path " + util::quote_for_message(path) +
                         " holds a control character or a backslash",
                     "use paths of printable characters without '\\'");
      }
    }
    words.push_back(path);
  }
  LUME_UNLOCK_TRY_ASSIGN(auto command, shell_join(words));
  // Then each link by its position in `paths` ("link <index> <target>"): readlink prints the
  // target as written, and the index keeps odd targets from being mistaken for paths.
  std::vector<std::string> quoted(words.begin() + 3, words.end());
  LUME_UNLOCK_TRY_ASSIGN(auto list, shell_join(quoted));
  command += " 2>/dev/null\ni=0; for p in " + list +
             "; do [ -L \"$p\" ] && printf 'link %s %s\\n' \"$i\" \"$(readlink \"$p\")\"; "
             "i=$((i+1)); done; exit 0";
  LUME_UNLOCK_TRY_ASSIGN(auto result, session.run(command));
  auto digests = parse_shasum_output(result.stdout_text);
  std::istringstream lines(result.stdout_text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!util::starts_with(line, "link ")) {
      continue;
    }
    const auto space = line.find(' ', 5);
    const auto index =
        util::parse_decimal(line.substr(5, space == std::string::npos ? 0 : space - 5));
    if (index && *index < paths.size()) {
      digests[paths[*index]] = link_state(line.substr(space + 1));
    }
  }
  return digests;
}

} // namespace lume_unlock::guest

#include "guest/guest_facts.hpp"

#include <map>

namespace lume_unlock::guest {

bool GuestFacts::operator==(const GuestFacts& other) const {
  return product_version == other.product_version && build_version == other.build_version &&
         kernel == other.kernel && machine == other.machine && uid == other.uid &&
         home == other.home;
}

const std::string& guest_facts_command() {
  // `printf '%s\000'` ends each record with a NUL; $(...) drops trailing newlines; a missing
  // sw_vers prints nothing (its error goes to /dev/null).
  static const std::string command =
      "printf 'product_version=%s\\000' \"$(sw_vers -productVersion 2>/dev/null)\"; "
      "printf 'build_version=%s\\000' \"$(sw_vers -buildVersion 2>/dev/null)\"; "
      "printf 'kernel=%s\\000' \"$(uname -s)\"; "
      "printf 'machine=%s\\000' \"$(uname -m)\"; "
      "printf 'uid=%s\\000' \"$(id -u)\"; "
      "printf 'home=%s\\000' \"$HOME\"";
  return command;
}

namespace {

Error bad_facts(const std::string& why) {
  return Error(ErrorCategory::guest,
               "reading the guest's facts (sw_vers, uname, id, $HOME)",
               why,
               "check that the guest user's login shell is a POSIX shell (zsh, bash, sh)");
}

} // namespace

Result<GuestFacts> parse_guest_facts(std::string_view output) {
  std::map<std::string, std::string> records;
  std::size_t start = 0;
  while (start < output.size()) {
    auto end = output.find('\0', start);
    if (end == std::string_view::npos) {
      return bad_facts("the output ends in the middle of a record (" +
                       std::to_string(output.size()) + " bytes)");
    }
    std::string_view record = output.substr(start, end - start);
    auto eq = record.find('=');
    if (eq == std::string_view::npos) {
      return bad_facts("a record without '=' in the output");
    }
    records[std::string(record.substr(0, eq))] = std::string(record.substr(eq + 1));
    start = end + 1;
  }
  auto required = [&](const char* key) -> Result<std::string> {
    auto it = records.find(key);
    if (it == records.end() || it->second.empty()) {
      return bad_facts(std::string("no value for '") + key + "'");
    }
    return it->second;
  };
  auto optional = [&](const char* key) -> std::optional<std::string> {
    auto it = records.find(key);
    if (it == records.end() || it->second.empty()) {
      return std::nullopt;
    }
    return it->second;
  };
  GuestFacts facts;
  facts.product_version = optional("product_version");
  facts.build_version = optional("build_version");
  for (auto [key, field] : {std::pair{"kernel", &facts.kernel},
                            std::pair{"machine", &facts.machine},
                            std::pair{"home", &facts.home}}) {
    LUME_UNLOCK_TRY_ASSIGN(auto value, required(key));
    *field = value;
  }
  if (facts.home.front() != '/') {
    return bad_facts("$HOME is '" + facts.home + "', not an absolute path");
  }
  LUME_UNLOCK_TRY_ASSIGN(auto uid, required("uid"));
  if (uid.find_first_not_of("0123456789") != std::string::npos || uid.size() > 10) {
    return bad_facts("'id -u' printed '" + uid + "', not a number");
  }
  facts.uid = std::stoul(uid);
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

} // namespace lume_unlock::guest

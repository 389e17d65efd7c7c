#pragma once
// An in-memory GuestSession for unit tests: records every command and upload and answers each
// command with the next scripted result (exit 0 with no output when the script runs out).
#include "guest/session.hpp"

#include <deque>
#include <map>
#include <string>
#include <vector>

namespace lume_unlock::test {

class ScriptedSession final : public guest::GuestSession {
public:
  std::deque<guest::CommandResult> answers;
  std::vector<std::string> commands;
  std::map<std::string, std::string> uploads; ///< remote path → bytes

  Result<guest::CommandResult> run(const std::string& command) override {
    commands.push_back(command);
    if (answers.empty()) {
      return guest::CommandResult{0, {}, {}};
    }
    guest::CommandResult next = answers.front();
    answers.pop_front();
    return next;
  }
  Status upload(std::string_view bytes, const std::string& remote_path, mode_t) override {
    uploads[remote_path] = std::string(bytes);
    commands.push_back("<upload " + remote_path + ">");
    return ok_status();
  }
  Result<std::string> read_file(const std::string& remote_path) override {
    return Error(ErrorCategory::guest, "reading '" + remote_path + "'", "not scripted");
  }
  std::uint64_t command_count() const override { return commands.size(); }
};

} // namespace lume_unlock::test

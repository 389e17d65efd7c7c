#pragma once
// An in-memory GuestSession for unit tests: records every command and upload and answers each
// command with the next scripted result (exit 0 with no output when the script runs out).
#include "guest/session.hpp"

#include <deque>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace lume_unlock::test {

class ScriptedSession final : public guest::GuestSession {
public:
  std::deque<guest::CommandResult> answers;
  std::vector<std::string> commands;
  std::map<std::string, std::string> uploads; ///< remote path → bytes
  std::map<std::string, std::string> files;   ///< what read_file and read_range find
  std::vector<std::string> reads;             ///< "<path>@<offset>+<length>" of each read_range

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
  /// send_file reads the host file whole: unit tests send small ones. It hashes nothing (the
  /// install command checks the files), like SshSession's SFTP path.
  Result<std::uint64_t> send_file(const std::string& local_path,
                                  const std::string& remote_path,
                                  const std::function<void(std::uint64_t)>& sent) override {
    std::ifstream in(local_path, std::ios::binary);
    if (!in) {
      return Error(ErrorCategory::failure, "reading '" + local_path + "'", "cannot open it");
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    uploads[remote_path] = bytes;
    commands.push_back("<send " + remote_path + ">");
    if (sent) {
      sent(bytes.size());
    }
    return std::uint64_t{bytes.size()};
  }
  Result<std::string> read_file(const std::string& remote_path, std::size_t max_bytes) override {
    const auto found = files.find(remote_path);
    if (found == files.end()) {
      return Error(ErrorCategory::guest, "reading '" + remote_path + "'", "not scripted");
    }
    if (found->second.size() > max_bytes) {
      return Error(ErrorCategory::guest, "reading '" + remote_path + "'", "over the limit");
    }
    return found->second;
  }
  Result<std::string>
  read_range(const std::string& remote_path, std::uint64_t offset, std::size_t length) override {
    reads.push_back(remote_path + "@" + std::to_string(offset) + "+" + std::to_string(length));
    LUME_UNLOCK_TRY_ASSIGN(auto bytes, read_file(remote_path, std::string().max_size()));
    return offset >= bytes.size() ? std::string() : bytes.substr(offset, length);
  }
  std::uint64_t command_count() const override { return commands.size(); }
};

} // namespace lume_unlock::test

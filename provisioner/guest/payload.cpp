#include "guest/payload.hpp"

#include "guest/shell_quote.hpp"
#include "util/atomic_file.hpp"
#include "util/random_id.hpp"
#include "util/sha256.hpp"
#include "util/tar_archive.hpp"
#include "util/text_check.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>
#include <sstream>

namespace lume_unlock::guest {

namespace {

// Exit statuses of the install command (the rest are the shell's own).
constexpr int k_extract_failed = 10;
constexpr int k_check_failed = 11;
constexpr int k_install_failed = 12;  // rolled back: the previous files are in place
constexpr int k_rollback_failed = 13; // rolled back only partly
constexpr const char* k_failed_marker = "lume-unlock-payload-failed ";

std::string member_name(std::size_t index) {
  return "files/" + std::to_string(index);
}

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string random_name() {
  return "payload-" + util::random_hex(16);
}

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) {
    text.pop_back();
  }
  return text;
}

std::string what_failed(std::size_t count) {
  return "installing " + std::to_string(count) + (count == 1 ? " file" : " files") +
         " in the guest";
}

/// The indices named by "<marker><index>" lines or by "files/<index>: FAILED" lines.
std::vector<std::size_t>
indices_in(const std::string& text, const std::string& prefix, const std::string& suffix) {
  std::vector<std::size_t> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) != 0 || line.size() < prefix.size() + suffix.size() ||
        line.compare(line.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const std::string digits =
        line.substr(prefix.size(), line.size() - prefix.size() - suffix.size());
    if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos) {
      out.push_back(std::stoul(digits));
    }
  }
  return out;
}

Status check_targets(const std::vector<PayloadFile>& files, const std::string& what) {
  std::set<std::string> targets;
  for (const PayloadFile& file : files) {
    if (file.path.empty() || file.path[0] != '/' || file.path.back() == '/') {
      return Error(ErrorCategory::usage,
                   what,
                   "guest path " + util::quote_for_message(file.path) +
                       " is not an absolute file path");
    }
    if (!targets.insert(file.path).second) {
      return Error(ErrorCategory::usage,
                   what,
                   "guest path " + util::quote_for_message(file.path) + " is given twice");
    }
  }
  return ok_status();
}

/// What the install command's exit status says (install.sh's statuses above).
Status install_outcome(const CommandResult& result,
                       const std::vector<PayloadFile>& files,
                       const std::string& what);

/// Streams every file of `files` (links cost no bytes: install.sh makes them) to
/// <scratch>/files/<index>, adding the bytes sent to `bytes_sent`. A file the transfer hashed in
/// the guest is compared here, and a mismatch is a verification error naming it; the others are
/// returned as SHA256SUMS lines, for the install command to check.
Result<std::string> send_files(GuestSession& session,
                               const std::vector<PayloadFile>& files,
                               const std::string& scratch,
                               const StreamedProgress& progress,
                               std::uint64_t& bytes_sent) {
  std::string sums;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (files[i].is_link()) {
      continue;
    }
    const auto sent = [&, i](std::uint64_t bytes) {
      if (progress) {
        progress(i, bytes_sent + bytes);
      }
    };
    LUME_UNLOCK_TRY_ASSIGN(
        auto streamed,
        session.send_file(files[i].source_path, scratch + "/" + member_name(i), sent));
    bytes_sent += streamed.bytes;
    std::string expected = files[i].sha256;
    std::transform(expected.begin(), expected.end(), expected.begin(), [](unsigned char c) {
      return static_cast<char>(std::tolower(c));
    });
    if (streamed.guest_sha256.empty()) {
      sums += expected + "  " + member_name(i) + "\n";
    } else if (streamed.guest_sha256 != expected) {
      return Error(ErrorCategory::verification,
                   "sending " + util::quote_for_message(files[i].path),
                   "SHA-256 mismatch after the transfer: the guest received " +
                       streamed.guest_sha256 + ", expected " + expected,
                   "nothing was changed; the transfer was damaged: retry");
    }
  }
  return sums;
}

} // namespace

Result<std::string> payload_install_script(const std::vector<PayloadFile>& files) {
  std::string script =
      "# Generated by lume-unlock: verify every file, then put all of them in place or none.\n"
      "s=$1; b=\"$s/backup\"\n"
      "cd \"$s\" || exit 10\n"
      "if [ -s SHA256SUMS ] && ! shasum -a 256 -c SHA256SUMS >check.out 2>&1; then\n"
      "  cat check.out; exit 11\n"
      "fi\n"
      "mkdir \"$b\" || exit 12\n"
      "# ready TARGET PARENT: the target is not a folder, and its parent exists (mkdir only when\n"
      "# it does not: a process per file is what a payload of many files costs).\n"
      "ready() {\n"
      "  if [ -d \"$1\" ] && [ ! -L \"$1\" ]; then echo \"$1: is a directory\" >&2; return 1; fi\n"
      "  [ -d \"$2\" ] || mkdir -p \"$2\"\n"
      "}\n"
      "# place INDEX TARGET: keep the previous file or link as the backup, then rename the new "
      "one\n"
      "# over it. A link is kept by making it again (ln and cp follow links) and then removed,\n"
      "# since mv onto a link to a folder would move into the folder.\n"
      "place() {\n"
      "  if [ -L \"$2\" ]; then ln -s \"$(readlink \"$2\")\" \"$b/$1\" && rm -f \"$2\" || return "
      "1\n"
      "  elif [ -e \"$2\" ]; then ln \"$2\" \"$b/$1\" 2>/dev/null || cp -p \"$2\" \"$b/$1\" "
      "|| return 1\n"
      "  fi\n"
      "  mv -f \"files/$1\" \"$2\"\n"
      "}\n"
      "# put INDEX TARGET PARENT MODE: a file; link INDEX TARGET PARENT LINK: a symbolic link.\n"
      "put() { ready \"$2\" \"$3\" && chmod \"$4\" \"files/$1\" && place \"$1\" \"$2\"; }\n"
      "link() { ready \"$2\" \"$3\" && ln -s \"$4\" \"files/$1\" && place \"$1\" \"$2\"; }\n"
      "# back INDEX TARGET: the previous file or link again, or none when there was none.\n"
      "back() {\n"
      "  if [ -L \"$2\" ]; then rm -f \"$2\"; fi\n"
      "  if [ -e \"$b/$1\" ] || [ -L \"$b/$1\" ]; then mv -f \"$b/$1\" \"$2\"; else rm -f \"$2\"; "
      "fi\n"
      "}\n";
  std::string undo; // built back to front: the last file moved is the first put back
  std::string puts = "n=0\n";
  for (std::size_t i = 0; i < files.size(); ++i) {
    LUME_UNLOCK_TRY_ASSIGN(auto target, shell_quote(files[i].path));
    auto parent = shell_quote(parent_of(files[i].path));
    const std::string index = std::to_string(i);
    undo = "  if [ \"$n\" -gt " + index + " ]; then back " + index + " " + target +
           " || r=1; fi\n" + undo;
    if (!files[i].is_link()) {
      puts +=
          "put " + index + " " + target + " " + parent.value() + " " + octal_mode(files[i].mode);
    } else {
      LUME_UNLOCK_TRY_ASSIGN(auto link, shell_quote(files[i].symlink_target));
      puts += "link " + index + " " + target + " " + parent.value() + " " + link;
    }
    puts += " || fail " + index + "\nn=" + std::to_string(i + 1) + "\n";
  }
  undo = "undo() {\n  r=0\n" + undo;
  undo += "  return $r\n}\n";
  script += undo;
  script += "fail() {\n  echo \"" + std::string(k_failed_marker) +
            "$1\"\n  if undo; then exit 12; fi\n  exit 13\n}\n";
  script += puts;
  script += "exit 0\n";
  return script;
}

namespace {

/// Runs the install command and reads its outcome; `report` gets the commands of the install.
Result<PayloadReport> run_install(GuestSession& session,
                                  const std::string& command,
                                  const std::vector<PayloadFile>& files,
                                  std::uint64_t commands_before,
                                  PayloadReport report) {
  const std::string what = what_failed(files.size());
  auto ran = session.run(command);
  report.commands = session.command_count() - commands_before;
  if (!ran.ok()) {
    return ran.error().with_context(what);
  }
  LUME_UNLOCK_TRY(install_outcome(ran.value(), files, what));
  return report;
}

} // namespace

Result<PayloadReport> install_payload(GuestSession& session,
                                      const std::vector<PayloadFile>& files,
                                      const std::string& scratch_root) {
  if (files.empty()) {
    return PayloadReport{};
  }
  const std::uint64_t commands_before = session.command_count();
  const std::string what = what_failed(files.size());
  LUME_UNLOCK_TRY(check_targets(files, what));
  std::vector<util::TarEntry> entries;
  std::string sums;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const PayloadFile& file = files[i];
    if (file.is_link()) {
      continue; // install.sh makes it
    }
    std::string content = file.content;
    if (!file.source_path.empty()) {
      LUME_UNLOCK_TRY_ASSIGN(content, util::read_file(file.source_path));
    }
    sums += util::sha256_hex(content) + "  " + member_name(i) + "\n";
    entries.push_back(util::TarEntry::bytes(member_name(i), std::move(content), file.mode));
  }
  LUME_UNLOCK_TRY_ASSIGN(auto script, payload_install_script(files));
  entries.push_back(util::TarEntry::bytes("SHA256SUMS", sums));
  entries.push_back(util::TarEntry::bytes("install.sh", script));
  LUME_UNLOCK_TRY_ASSIGN(auto archive, util::tar_gz_bytes(std::move(entries)));

  const std::string scratch = scratch_root + "/" + random_name();
  const std::string archive_path = scratch + ".tar.gz";
  if (auto uploaded = session.upload(archive, archive_path, 0600); !uploaded.ok()) {
    return uploaded.error().with_context(what);
  }
  // ONE command: extract, verify, install (install.sh), and always clean up.
  const std::string command =
      "s=" + shell_quote(scratch).value() + "; a=" + shell_quote(archive_path).value() +
      "\nmkdir \"$s\" && tar -xzf \"$a\" -C \"$s\" || { rm -rf \"$s\" \"$a\"; exit " +
      std::to_string(k_extract_failed) +
      "; }\nsh \"$s/install.sh\" \"$s\"; r=$?\nrm -rf \"$s\" \"$a\"\nexit $r";
  return run_install(session, command, files, commands_before, {files.size(), archive.size(), 0});
}

Result<PayloadReport> install_streamed_payload(GuestSession& session,
                                               const std::vector<PayloadFile>& files,
                                               const std::string& scratch_root,
                                               const StreamedProgress& progress) {
  if (files.empty()) {
    return PayloadReport{};
  }
  const std::uint64_t commands_before = session.command_count();
  const std::string what = what_failed(files.size());
  LUME_UNLOCK_TRY(check_targets(files, what));
  for (const PayloadFile& file : files) {
    if (!file.is_link() && (file.source_path.empty() || file.sha256.size() != 64)) {
      return Error(ErrorCategory::usage,
                   what,
                   "guest path " + util::quote_for_message(file.path) +
                       " has no host file and SHA-256 to stream");
    }
  }
  LUME_UNLOCK_TRY_ASSIGN(auto script, payload_install_script(files));
  const std::string scratch = scratch_root + "/" + random_name();
  LUME_UNLOCK_TRY_ASSIGN(auto quoted_scratch, shell_quote(scratch));
  // Command 1: an empty scratch directory for the files.
  auto made = session.run("mkdir -p " + quoted_scratch + "/files");
  if (!made.ok()) {
    return made.error().with_context(what);
  }
  if (made.value().exit_status != 0) {
    return Error(ErrorCategory::guest,
                 what,
                 "cannot create " + util::quote_for_message(scratch) + ": " +
                     trim(made.value().stderr_text),
                 "check the guest user's permissions and free disk space");
  }
  std::uint64_t bytes_sent = 0;
  auto sent = send_files(session, files, scratch, progress, bytes_sent);
  if (!sent.ok()) {
    (void)session.run("rm -rf " + quoted_scratch); // nothing reached its final name
    return sent.error().with_context(what);
  }
  // Command 2: the manifest and install.sh as here-documents (a random delimiter no generated
  // line can equal), then the same verify-and-install as install_payload, always cleaning up.
  const std::string end = "LUME_UNLOCK_END_" + util::random_hex(16);
  const std::string command = "s=" + quoted_scratch + "\ncat >\"$s/SHA256SUMS\" <<'" + end + "'\n" +
                              sent.value() + end + "\ncat >\"$s/install.sh\" <<'" + end + "'\n" +
                              script + end +
                              "\nsh \"$s/install.sh\" \"$s\"; r=$?\nrm -rf \"$s\"\nexit $r";
  return run_install(session, command, files, commands_before, {files.size(), bytes_sent, 0});
}

namespace {

Status install_outcome(const CommandResult& result,
                       const std::vector<PayloadFile>& files,
                       const std::string& what) {
  const std::string stderr_text = trim(result.stderr_text);
  switch (result.exit_status) {
  case 0:
    return ok_status();
  case k_extract_failed:
    return Error(ErrorCategory::guest,
                 what,
                 "extracting the archive failed: " +
                     (stderr_text.empty() ? std::string("tar exited with an error") : stderr_text),
                 "nothing was changed; check free disk space in the guest and retry");
  case k_check_failed: {
    std::vector<std::size_t> bad = indices_in(result.stdout_text, "files/", ": FAILED");
    std::string names;
    for (std::size_t index : bad) {
      if (index < files.size()) {
        names += (names.empty() ? "" : ", ") + util::quote_for_message(files[index].path);
      }
    }
    return Error(ErrorCategory::verification,
                 what,
                 "SHA-256 mismatch after extraction for " +
                     (names.empty() ? std::string("some files") : names),
                 "nothing was changed; the transfer was damaged: retry");
  }
  case k_install_failed:
  case k_rollback_failed: {
    std::vector<std::size_t> failed = indices_in(result.stdout_text, k_failed_marker, "");
    const std::string name = !failed.empty() && failed.front() < files.size()
                                 ? util::quote_for_message(files[failed.front()].path)
                                 : std::string("a file");
    const bool restored = result.exit_status == k_install_failed;
    return Error(ErrorCategory::guest,
                 what,
                 "cannot install " + name + (stderr_text.empty() ? "" : ": " + stderr_text),
                 restored ? "the previous files were put back; check the path's permissions in "
                            "the guest and retry"
                          : "putting the previous files back also failed: check the paths in "
                            "the guest by hand, then retry");
  }
  default:
    return Error(ErrorCategory::guest,
                 what,
                 "the install command exited with status " + std::to_string(result.exit_status) +
                     (stderr_text.empty() ? "" : ": " + stderr_text),
                 "check the guest's free disk space and retry");
  }
}

} // namespace

} // namespace lume_unlock::guest

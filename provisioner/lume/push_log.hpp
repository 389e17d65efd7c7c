#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::lume {

/// What GET /lume/logs answers as `info` when Lume was not started as its LaunchAgent (no
/// /tmp/lume_daemon.log; lume-api.md §3.19): not an error, the log just cannot be seen.
inline constexpr std::string_view k_info_log_missing = "Info log file not found";

/// A background push that Lume reports as failed in its log.
struct PushFailure {
  /// Lume's text after "- Error: " (PushError's localizedDescription, often only
  /// "The operation couldn’t be completed. (lume.PushError error 3.)").
  std::string lume_error;
  /// Logger.error lines ("[<ISO8601>] ERROR: …") printed since the push started, which say
  /// more (e.g. "Missing GitHub credentials…"); at most the last three.
  std::vector<std::string> logged_errors;
};

/// Looks in `log_since_push` (Lume's stdout from the push on) for the line Handlers.swift
/// handlePush prints when a push of `image_name` with `tags` fails:
/// "Background push failed for image: NAME:TAG1,TAG2 - Error: TEXT". Returns nullopt when there
/// is no such line (the push still runs, or succeeded).
std::optional<PushFailure> find_push_failure(std::string_view log_since_push,
                                             const std::string& image_name,
                                             const std::vector<std::string>& tags);

} // namespace lume_unlock::lume

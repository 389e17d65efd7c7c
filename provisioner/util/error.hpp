#pragma once

#include <stdexcept>
#include <string>

namespace lume_unlock {

/// What kind of failure an Error is; each maps to one process exit code (DESIGN §9).
enum class ErrorCategory {
  failure = 1,      ///< anything not covered below
  usage = 2,        ///< bad usage or bad input (flags, names, recipes, references)
  lume_api = 3,     ///< Lume's HTTP API failed or answered unexpectedly
  registry = 4,     ///< an OCI registry failed, or a digest did not match
  guest = 5,        ///< the guest could not be reached or a guest command failed
  verification = 6, ///< the result does not match what was expected (drift, probe answers)
};

/// The exit code of a category.
int exit_code(ErrorCategory category);

/// Stable lower-case name of a category, used in JSON output ("lume-api", ...).
const char* category_name(ErrorCategory category);

/// The one error type of lume-unlock. `what_failed` names the object ("pull of 'ghcr.io/a/b:1'"),
/// `why` the cause (status, server message, errno text) and `hint` the next thing to run.
/// Messages never contain passwords or tokens: callers redact before constructing. Every part
/// goes through util::display_text here, once, so outside text quoted by any caller (a VM
/// name, a reference, a server's message) reaches no terminal with control characters and is
/// cut to a sane length (issue 27).
class Error : public std::runtime_error {
public:
  Error(ErrorCategory category, std::string what_failed, std::string why, std::string hint = {});

  ErrorCategory category() const { return m_category; }
  const std::string& what_failed() const { return m_what_failed; }
  const std::string& why() const { return m_why; }
  const std::string& hint() const { return m_hint; }

  /// "<what_failed>: <why>" (or either alone when the other is empty).
  std::string message() const;

  /// A copy with `context` prepended to what failed ("create step 'install': " + ...).
  Error with_context(const std::string& context) const;
  /// A copy with a hint (replacing any previous one).
  Error with_hint(std::string hint) const;

private:
  ErrorCategory m_category;
  std::string m_what_failed;
  std::string m_why;
  std::string m_hint;
};

} // namespace lume_unlock

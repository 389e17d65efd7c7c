#include "error.hpp"

#include "util/text_check.hpp"

namespace lume_unlock {

namespace {

std::string join_message(const std::string& what_failed, const std::string& why) {
  if (what_failed.empty()) {
    return why;
  }
  if (why.empty()) {
    return what_failed;
  }
  return what_failed + ": " + why;
}

} // namespace

int exit_code(ErrorCategory category) {
  return static_cast<int>(category);
}

const char* category_name(ErrorCategory category) {
  switch (category) {
  case ErrorCategory::failure:
    return "failure";
  case ErrorCategory::usage:
    return "usage";
  case ErrorCategory::lume_api:
    return "lume-api";
  case ErrorCategory::registry:
    return "registry";
  case ErrorCategory::guest:
    return "guest";
  case ErrorCategory::verification:
    return "verification";
  }
  return "failure";
}

Error::Error(ErrorCategory category, std::string what_failed, std::string why, std::string hint)
    : std::runtime_error(join_message(util::display_text(what_failed), util::display_text(why))),
      m_category(category), m_what_failed(util::display_text(what_failed)),
      m_why(util::display_text(why)), m_hint(util::display_text(hint)) {}

std::string Error::message() const {
  return join_message(m_what_failed, m_why);
}

Error Error::with_context(const std::string& context) const {
  std::string what = m_what_failed.empty() ? context : context + ": " + m_what_failed;
  return Error(m_category, what, m_why, m_hint);
}

Error Error::with_hint(std::string hint) const {
  return Error(m_category, m_what_failed, m_why, std::move(hint));
}

} // namespace lume_unlock

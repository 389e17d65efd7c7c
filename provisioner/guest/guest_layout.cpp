#include "guest/guest_layout.hpp"

#include "util/sha256.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

namespace lume_unlock::guest {

namespace {

const std::string k_label_prefix = "dev.lume-unlock.";
const std::string k_plist_suffix = ".plist";

Error layout_error(const std::string& why, const std::string& hint = {}) {
  return Error(ErrorCategory::usage, "guest layout", why, hint);
}

} // namespace

Result<GuestLayout> GuestLayout::make(const std::string& home,
                                      const std::string& shim_sha256,
                                      const std::string& shim_file_name) {
  if (auto problem = util::text_problem(home)) {
    return layout_error("home directory " + *problem);
  }
  if (home.empty() || home[0] != '/') {
    return layout_error("home directory " + util::quote_for_message(home) +
                            " is not an absolute path",
                        "pass what `echo \"$HOME\"` prints in the guest");
  }
  if (!util::is_sha256_hex(shim_sha256)) {
    return layout_error("shim sha256 " + util::quote_for_message(shim_sha256) +
                        " is not 64 lower-case hex characters");
  }
  if (shim_file_name.empty() || shim_file_name.find('/') != std::string::npos ||
      shim_file_name == "." || shim_file_name == ".." || util::text_problem(shim_file_name)) {
    return layout_error("shim file name " + util::quote_for_message(shim_file_name) +
                        " is not a plain file name");
  }
  std::string trimmed = home;
  while (trimmed.size() > 1 && trimmed.back() == '/') {
    trimmed.pop_back();
  }
  // A home of "/" joins as "" + "/Library/…".
  if (trimmed == "/") {
    trimmed.clear();
  }
  return GuestLayout(std::move(trimmed), shim_sha256, shim_file_name);
}

GuestLayout::GuestLayout(std::string home, std::string shim_sha256, std::string shim_file_name)
    : m_home(std::move(home)), m_shim_sha256(std::move(shim_sha256)),
      m_shim_file_name(std::move(shim_file_name)) {}

std::string support_dir_of_home(const std::string& home) {
  return home + "/Library/Application Support/LumeUnlock";
}

std::string GuestLayout::support_dir() const {
  return support_dir_of_home(m_home);
}
std::string GuestLayout::shim_dir() const {
  return support_dir() + "/shim/" + m_shim_sha256;
}
std::string GuestLayout::shim_path() const {
  return shim_dir() + "/" + m_shim_file_name;
}
std::string GuestLayout::probe_path() const {
  return support_dir() + "/bin/lume-unlock-probe";
}
std::string GuestLayout::guard_file_path() const {
  return support_dir() + "/enabled-executables";
}
std::string GuestLayout::enablement_json_path() const {
  return support_dir() + "/enablement.json";
}
std::string GuestLayout::staging_root() const {
  return support_dir() + "/staging";
}
std::string GuestLayout::staging_dir() const {
  return staging_root() + (m_run_id.empty() ? "" : "/" + m_run_id);
}
Result<GuestLayout> GuestLayout::with_run_id(const std::string& run_id) const {
  if (run_id.empty() || run_id.size() > 64 ||
      run_id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos) {
    return Error(ErrorCategory::usage,
                 "staging run id " + run_id,
                 "expected 1 to 64 characters from [a-z0-9-]");
  }
  GuestLayout layout = *this;
  layout.m_run_id = run_id;
  return layout;
}
std::string GuestLayout::launch_agents_dir() const {
  return m_home + "/Library/LaunchAgents";
}
std::string GuestLayout::agent_plist_path(const std::string& name) const {
  return launch_agents_dir() + "/" + agent_plist_file_name(name);
}
std::string GuestLayout::logs_dir() const {
  return m_home + "/Library/Logs/LumeUnlock";
}
std::string GuestLayout::stdout_log_path(const std::string& name) const {
  return logs_dir() + "/" + name + ".stdout.log";
}
std::string GuestLayout::stderr_log_path(const std::string& name) const {
  return logs_dir() + "/" + name + ".stderr.log";
}

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string agent_label(const std::string& name) {
  return k_label_prefix + name;
}

std::string agent_plist_file_name(const std::string& name) {
  return agent_label(name) + k_plist_suffix;
}

std::string entry_name_from_plist_file_name(const std::string& file_name) {
  if (file_name.size() <= k_label_prefix.size() + k_plist_suffix.size() ||
      !util::starts_with(file_name, k_label_prefix) ||
      !util::ends_with(file_name, k_plist_suffix)) {
    return {};
  }
  return file_name.substr(k_label_prefix.size(),
                          file_name.size() - k_label_prefix.size() - k_plist_suffix.size());
}

} // namespace lume_unlock::guest

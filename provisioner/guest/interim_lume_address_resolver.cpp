#include "guest/interim_lume_address_resolver.hpp"

#include "util/http_client.hpp"

#include <nlohmann/json.hpp>

#include <thread>

namespace lume_unlock::guest {

InterimLumeAddressResolver::InterimLumeAddressResolver(std::string lume_url,
                                                       std::chrono::milliseconds wait,
                                                       std::chrono::milliseconds poll)
    : m_lume_url(std::move(lume_url)), m_wait(wait), m_poll(poll) {
  while (!m_lume_url.empty() && m_lume_url.back() == '/') {
    m_lume_url.pop_back();
  }
}

Result<std::string> InterimLumeAddressResolver::resolve(const std::string& vm) {
  if (vm.empty() || vm.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                         "0123456789._-") != std::string::npos) {
    return Error(ErrorCategory::usage, "VM name '" + vm + "'",
                 "Lume names use only letters, digits, '.', '_' and '-'",
                 "list the VMs with 'lume ls'");
  }
  const std::string url = m_lume_url + "/lume/vms/" + vm;
  const std::string what = "finding the address of VM '" + vm + "'";
  util::HttpClient client(util::HttpClientOptions{!util::is_loopback_url(url), "lume-unlock"});
  const auto deadline = std::chrono::steady_clock::now() + m_wait;
  std::string waiting_for;
  while (true) {
    util::HttpRequest request("GET", url);
    request.timeout = std::chrono::seconds(30);
    auto response = client.send(request);
    if (!response.ok()) {
      return Error(ErrorCategory::lume_api, what,
                   "Lume at " + util::redact_url(m_lume_url) + " did not answer: " +
                       response.error().detail,
                   "start Lume ('lume serve') or point --lume-url at it");
    }
    const auto& r = response.value();
    nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
    if (r.status != 200) {
      std::string message = body.is_object() && body.contains("message") && body["message"].is_string()
                                ? body["message"].get<std::string>()
                                : "HTTP " + std::to_string(r.status);
      return Error(ErrorCategory::lume_api, what, "Lume said: " + message,
                   "list the VMs with 'lume ls'");
    }
    if (!body.is_object()) {
      return Error(ErrorCategory::lume_api, what, "Lume's answer is not a JSON object",
                   "check that --lume-url points at Lume's API");
    }
    const std::string status = body.value("status", std::string());
    if (status != "running" && status != "provisioning" && status != "pulling") {
      return Error(ErrorCategory::guest, what, "VM '" + vm + "' is not running (status '" + status + "')",
                   "start it with 'lume run " + vm + " --no-display'");
    }
    const auto ip = body.find("ipAddress");
    const auto ssh = body.find("sshAvailable");
    const bool has_ip = ip != body.end() && ip->is_string() && !ip->get<std::string>().empty();
    if (status == "running" && has_ip && ssh != body.end() && ssh->is_boolean() && ssh->get<bool>()) {
      return ip->get<std::string>();
    }
    waiting_for = status != "running" ? "VM '" + vm + "' is still " + status
                  : !has_ip          ? "VM '" + vm + "' has no IP address yet"
                                     : "SSH is not available on VM '" + vm + "' yet";
    if (std::chrono::steady_clock::now() + m_poll > deadline) {
      return Error(ErrorCategory::guest, what,
                   waiting_for + " after waiting " + std::to_string(m_wait.count() / 1000) + " s",
                   "wait for it to finish booting and check that Remote Login is on in the guest");
    }
    std::this_thread::sleep_for(m_poll);
  }
}

} // namespace lume_unlock::guest

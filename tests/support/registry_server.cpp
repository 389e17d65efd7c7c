#include "support/registry_server.hpp"

#include "util/http_client.hpp"

#include <unistd.h>

#include <fstream>
#include <thread>

namespace lume_unlock::test {

namespace {

const char* const k_binary = "/usr/bin/docker-registry";

// A bcrypt hash (cost 4) of a password no test sends: a registry with Access::login_required
// must turn every request away, so nobody logs in.
const char* const k_htpasswd = "ci:$2b$04$V1RnCjPVQAV1ENgeqhMPmOetBxid7bwmZEmbhuP9fwixUC7EbbcMm\n";

/// Up: GET /v2/ answers 200, or 401 when the registry requires a login.
bool answers_v2(const RegistryServer& server, RegistryServer::Access access) {
  util::HttpClientOptions options;
  options.ca_file = server.ca_file();
  util::HttpClient client(options);
  auto response = client.send({"GET", server.url() + "/v2/"});
  const int expected = access == RegistryServer::Access::login_required ? 401 : 200;
  return response.ok() && response.value().status == expected;
}

} // namespace

std::unique_ptr<RegistryServer>
RegistryServer::start(std::string& why_not, Transport transport, Access access, Loopback loopback) {
  if (::access(k_binary, X_OK) != 0) {
    why_not = std::string(k_binary) + " is not installed (run scripts/bootstrap)";
    return nullptr;
  }
  std::unique_ptr<RegistryServer> server(new RegistryServer());
  server->m_dir = std::make_unique<TempDir>("lume-unlock-registry");
  server->m_storage = *server->m_dir / "data";
  if (transport == Transport::tls) {
    server->m_ca = TestCa::create(why_not);
    if (!server->m_ca) {
      return nullptr;
    }
  }
  server->m_port = free_loopback_port();
  // A port free on 127.0.0.1 is taken to be free on [::1] too; the wait below tells otherwise.
  server->m_host =
      (loopback == Loopback::ipv6 ? "[::1]:" : "127.0.0.1:") + std::to_string(server->m_port);
  const std::string config = *server->m_dir / "config.yml";
  {
    std::ofstream out(config);
    out << "version: 0.1\n"
           "log: { level: warn, accesslog: { disabled: true } }\n"
           "storage:\n"
           "  filesystem: { rootdirectory: "
        << server->m_storage
        << " }\n"
           "  delete: { enabled: true }\n"
           "http:\n"
           "  addr: \""
        << server->m_host << "\"\n"; // quoted: YAML reads a bare [::1]:N as a list
    if (server->m_ca) {
      out << "  tls: { certificate: " << server->m_ca->server_certificate()
          << ", key: " << server->m_ca->server_key() << " }\n";
    }
    if (access == Access::login_required) {
      const std::string htpasswd = *server->m_dir / "htpasswd";
      std::ofstream(htpasswd) << k_htpasswd;
      out << "auth:\n  htpasswd: { realm: lume-unlock-test, path: " << htpasswd << " }\n";
    }
  }
  ChildProcess::Options options;
  options.argv = {k_binary, "serve", config};
  options.log_dir = server->m_dir->path();
  options.name = "docker-registry";
  server->m_process = std::make_unique<ChildProcess>(options);
  // wait_for_tcp knows IPv4 only; on [::1] the GET /v2/ polling below is the wait.
  if (loopback == Loopback::ipv4 && !wait_for_tcp(server->m_port, std::chrono::seconds(10))) {
    why_not = "docker-registry did not listen on " + server->m_host + ": " + server->logs();
    return nullptr;
  }
  for (int i = 0; i < (loopback == Loopback::ipv6 ? 500 : 100) && !answers_v2(*server, access);
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!answers_v2(*server, access)) {
    why_not =
        "docker-registry on " + server->m_host + " does not answer GET /v2/: " + server->logs();
    return nullptr;
  }
  return server;
}

RegistryServer::~RegistryServer() {
  if (m_process) {
    m_process->stop();
  }
}

std::string RegistryServer::logs() const {
  return m_process ? m_process->stderr_text() + m_process->stdout_text() : std::string();
}

} // namespace lume_unlock::test

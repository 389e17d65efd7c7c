#pragma once

#include "oci/registry_client.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"
#include "support/test_ca.hpp"

#include <memory>
#include <string>

namespace lume_unlock::test {

/// Debian's `docker-registry serve CONFIG` (CNCF distribution 2.8) on a free 127.0.0.1 port with
/// storage in a temporary directory, serving TLS on a certificate from its own throwaway CA
/// (Lume reaches registries over https only); stopped by PID on destruction.
class RegistryServer {
public:
  enum class Transport { tls, plain_http };
  /// login_required: docker-registry's htpasswd auth with a password nobody is given, so every
  /// request gets 401 and a Basic challenge (a registry that needs credentials).
  enum class Access { open, login_required };

  /// Starts the registry and waits until GET /v2/ answers 200. Returns null and sets `why_not`
  /// when the binary is missing or the server does not come up. Transport::plain_http exists
  /// only for tests that show a plain-HTTP registry refused.
  /// Loopback::ipv6 listens on [::1] instead of 127.0.0.1 (host() is then "[::1]:PORT").
  enum class Loopback { ipv4, ipv6 };
  static std::unique_ptr<RegistryServer> start(std::string& why_not,
                                               Transport transport = Transport::tls,
                                               Access access = Access::open,
                                               Loopback loopback = Loopback::ipv4);

  ~RegistryServer();

  /// "127.0.0.1:PORT" (or "[::1]:PORT") — the registry part of references.
  const std::string& host() const { return m_host; }
  int port() const { return m_port; }
  std::string url() const { return (m_ca ? "https://" : "http://") + m_host; }
  /// The CA that signed the server's certificate (empty for plain HTTP); cert_dir() is the
  /// directory form skopeo's --cert-dir reads.
  std::string ca_file() const { return m_ca ? m_ca->ca_file() : std::string(); }
  std::string cert_dir() const { return m_ca ? m_ca->cert_dir() : std::string(); }
  /// The throwaway CA itself (null for plain HTTP), e.g. for another loopback HTTPS server that
  /// lume-unlock must trust through the same SSL_CERT_FILE.
  const TestCa* ca() const { return m_ca.get(); }
  /// Registry client options that trust this server (its CA; plain HTTP: an insecure host).
  oci::RegistryClientOptions client_options() const {
    oci::RegistryClientOptions options;
    options.ca_file = ca_file();
    if (!m_ca) {
      options.insecure_registries = {m_host};
    }
    return options;
  }
  /// skopeo's flags to trust this server: "--PREFIXcert-dir=DIR" ("--PREFIXtls-verify=false"
  /// for plain HTTP); PREFIX is "", "src-" or "dest-".
  std::string skopeo_trust(const std::string& prefix = "") const {
    return m_ca ? "--" + prefix + "cert-dir=" + cert_dir() : "--" + prefix + "tls-verify=false";
  }
  const std::string& storage_dir() const { return m_storage; }
  std::string logs() const;

private:
  RegistryServer() = default;
  std::unique_ptr<TempDir> m_dir;
  std::unique_ptr<TestCa> m_ca;
  std::unique_ptr<ChildProcess> m_process;
  std::string m_host;
  std::string m_storage;
  int m_port = 0;
};

} // namespace lume_unlock::test

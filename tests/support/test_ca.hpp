#pragma once

#include "support/temp_dir.hpp"

#include <memory>
#include <string>

namespace lume_unlock::test {

/// A throwaway certificate authority and one server certificate for 127.0.0.1 and localhost,
/// made at test time with the `openssl` command line (nothing is committed). Registries serve
/// TLS with it; clients trust ca_file() (our client: --registry-ca / SSL_CERT_FILE; lume-sim:
/// --registry-ca, its stand-in for the Mac's keychain; skopeo: cert_dir()).
class TestCa {
public:
  /// Creates the CA and the server certificate in a temporary directory. Returns null and sets
  /// `why_not` (openssl's output) when openssl fails.
  static std::unique_ptr<TestCa> create(std::string& why_not);

  /// PEM certificate of the CA.
  std::string ca_file() const { return m_dir->path() + "/trust/ca.crt"; }
  /// A directory holding only ca.crt, the layout skopeo's --cert-dir reads.
  std::string cert_dir() const { return m_dir->path() + "/trust"; }
  /// PEM server certificate (SAN IP:127.0.0.1, DNS:localhost) and its unencrypted key.
  std::string server_certificate() const { return m_dir->path() + "/server.crt"; }
  std::string server_key() const { return m_dir->path() + "/server.key"; }

private:
  TestCa() = default;
  std::unique_ptr<TempDir> m_dir;
};

} // namespace lume_unlock::test

#include "support/test_ca.hpp"

#include "support/file_io.hpp"
#include "support/process.hpp"

#include <filesystem>

namespace lume_unlock::test {

namespace {

/// Runs one openssl command; false with its output in `why_not` on failure.
bool run_openssl(const std::vector<std::string>& arguments, std::string& why_not) {
  std::vector<std::string> argv{"/usr/bin/openssl"};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  const CommandOutput out = run_command(argv);
  if (out.exit_status != 0) {
    why_not = "openssl " + arguments.front() + " failed: " + out.stderr_text + out.stdout_text;
    return false;
  }
  return true;
}

} // namespace

std::unique_ptr<TestCa> TestCa::create(std::string& why_not) {
  std::unique_ptr<TestCa> ca(new TestCa());
  ca->m_dir = std::make_unique<TempDir>("lume-unlock-ca");
  std::filesystem::create_directories(ca->cert_dir());
  // A config with an empty distinguished-name section, so the host's openssl.cnf adds no
  // extensions of its own (v3_ca would make the server certificate a CA).
  const std::string config = *ca->m_dir / "req.cnf";
  write_file(config, "[req]\ndistinguished_name=dn\n[dn]\n");
  const std::string ca_key = *ca->m_dir / "ca.key";
  const std::vector<std::string> p256{"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"};
  std::vector<std::string> make_ca{"req", "-config", config, "-x509", "-nodes", "-days", "2"};
  make_ca.insert(make_ca.end(), p256.begin(), p256.end());
  make_ca.insert(make_ca.end(),
                 {"-keyout",
                  ca_key,
                  "-out",
                  ca->ca_file(),
                  "-subj",
                  "/CN=lume-unlock throwaway test CA",
                  "-addext",
                  "basicConstraints=critical,CA:TRUE",
                  "-addext",
                  "keyUsage=critical,keyCertSign,cRLSign"});
  std::vector<std::string> make_server{"req", "-config", config, "-x509", "-nodes", "-days", "2"};
  make_server.insert(make_server.end(), p256.begin(), p256.end());
  make_server.insert(make_server.end(),
                     {"-CA",
                      ca->ca_file(),
                      "-CAkey",
                      ca_key,
                      "-keyout",
                      ca->server_key(),
                      "-out",
                      ca->server_certificate(),
                      "-subj",
                      "/CN=127.0.0.1",
                      "-addext",
                      "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost",
                      "-addext",
                      "basicConstraints=CA:FALSE",
                      "-addext",
                      "extendedKeyUsage=serverAuth"});
  if (!run_openssl(make_ca, why_not) || !run_openssl(make_server, why_not)) {
    return nullptr;
  }
  return ca;
}

} // namespace lume_unlock::test

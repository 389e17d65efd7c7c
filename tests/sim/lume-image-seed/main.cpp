// lume-image-seed: pushes a small Lume-format image (reference/lume-oci.md §3.1) to a registry
// with lume-unlock's own registry client and prints its manifest digest. The demo and manual
// tests use it to give lume-sim something real to pull.
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "support/lume_image_seeder.hpp"

#include <cstdlib>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help") {
    std::cerr << "usage: lume-image-seed REGISTRY/REPOSITORY:TAG [SEED]\n"
                 "Pushes a small Lume-format VM image (config, nvram, one gzip disk chunk) and\n"
                 "prints its manifest digest, over https, trusting the CA file named by\n"
                 "SSL_CERT_FILE (else the system store).\n";
    return argc < 2 ? 2 : 0;
  }
  using namespace lume_unlock;
  auto ref = oci::parse_reference(argv[1]);
  if (!ref) {
    std::cerr << "lume-image-seed: " << ref.error().message() << '\n';
    return 2;
  }
  test::LumeImageSpec spec;
  if (argc > 2) {
    spec.seed = static_cast<std::uint32_t>(std::strtoul(argv[2], nullptr, 10));
  }
  oci::RegistryClientOptions options;
  if (const char* ca = std::getenv("SSL_CERT_FILE"); ca != nullptr) {
    options.ca_file = ca;
  }
  oci::RegistryClient client(options);
  auto seeded = test::seed_lume_image(client, ref.value(), spec);
  if (!seeded) {
    std::cerr << "lume-image-seed: " << seeded.error().message() << '\n';
    return 4;
  }
  std::cout << seeded.value().digest.str() << '\n';
  return 0;
}

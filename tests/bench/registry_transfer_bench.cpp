// Blob transfer throughput through a loopback docker-registry serving TLS: our RegistryClient
// against `skopeo copy`, in the same run, plus our peak RSS. Run manually:
//   build/tests/bench/registry_transfer_bench [--mib 256] [--keep]
// ctest runs it only as a smoke test with --mib 4. Exit 77 (skipped) without docker-registry
// or skopeo, unless CI=true.
#include "oci/media_types.hpp"
#include "oci/registry_client.hpp"
#include "support/random_file.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>

namespace {

using namespace lume_unlock;
using Clock = std::chrono::steady_clock;

const char* const k_skopeo = "/usr/bin/skopeo";

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

long peak_rss_kib(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return usage.ru_maxrss;
}

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "registry_transfer_bench: " << what << '\n';
  std::exit(1);
}

/// A `dir:` layout (skopeo's directory transport) holding one image: a Lume config and the blob.
void write_skopeo_dir(const std::string& dir,
                      const std::string& blob_path,
                      const std::string& blob_hex,
                      std::uint64_t blob_size) {
  test::run_command({"/bin/mkdir", "-p", dir});
  const std::string config =
      R"({"mediatype":"application/vnd.trycua.lume.config.v1+json","os":"macOS"})";
  std::ofstream(dir + "/" + util::sha256_hex(config), std::ios::binary) << config;
  std::ofstream(dir + "/version") << "Directory Transport Version: 1.1\n";
  if (std::rename(blob_path.c_str(), (dir + "/" + blob_hex).c_str()) != 0) {
    fail("cannot move the blob into the skopeo directory");
  }
  nlohmann::json manifest = {{"schemaVersion", 2},
                             {"mediaType", oci::media_type::oci_manifest},
                             {"config",
                              {{"mediaType", oci::media_type::lume_config},
                               {"digest", "sha256:" + util::sha256_hex(config)},
                               {"size", config.size()}}},
                             {"layers",
                              {{{"mediaType", oci::media_type::lume_disk},
                                {"digest", "sha256:" + blob_hex},
                                {"size", blob_size}}}}};
  std::ofstream(dir + "/manifest.json", std::ios::binary) << manifest.dump();
}

} // namespace

int main(int argc, char** argv) {
  const std::uint64_t mib = test::mib_argument(argc, argv, "registry_transfer_bench", 256);
  const bool ci = test::running_in_ci();
  std::string why_not;
  if (access(k_skopeo, X_OK) != 0) {
    why_not = "skopeo is not installed";
  }
  std::unique_ptr<test::RegistryServer> server;
  if (why_not.empty()) {
    server = test::RegistryServer::start(why_not);
  }
  if (!server) {
    std::cerr << "registry_transfer_bench: skipped: " << why_not << '\n';
    return ci ? 1 : 77;
  }
  test::TempDir work("lume-unlock-bench");
  const std::uint64_t bytes = mib << 20;
  const std::string ours_hex = test::write_random_file(work / "ours.bin", mib, 1);
  const std::string theirs_hex = test::write_random_file(work / "theirs.bin", mib, 2);
  const auto repo = oci::parse_reference(server->host() + "/bench/ours:v1").value_or_throw();

  // Upload with our client: hashing pass included (it is part of a real push).
  oci::RegistryClient client(server->client_options()); // TLS, trusting the throwaway CA
  auto start = Clock::now();
  auto pushed = client.push_blob_file(repo, work / "ours.bin", oci::media_type::lume_disk);
  const double our_upload = seconds_since(start);
  if (!pushed) {
    fail(pushed.error().message());
  }
  if (pushed.value().digest.hex() != ours_hex) {
    fail("uploaded digest differs");
  }
  const std::string config =
      R"({"mediatype":"application/vnd.trycua.lume.config.v1+json","os":"macOS"})";
  oci::Manifest manifest;
  manifest.media_type = oci::media_type::oci_manifest;
  manifest.config =
      client.push_blob_bytes(repo, config, oci::media_type::lume_config).value_or_throw();
  manifest.layers.push_back(pushed.value());
  client.push_manifest(repo, oci::serialize(manifest), oci::media_type::oci_manifest)
      .value_or_throw();

  // Upload again with the digest already known (as when it was computed while compressing), to
  // another repository so the registry cannot skip it.
  const auto repo2 = oci::parse_reference(server->host() + "/bench/ours-known:v1").value_or_throw();
  sync(); // earlier phases' writeback must not slow this one down
  start = Clock::now();
  auto pushed_known = client.push_blob_file(
      repo2, work / "ours.bin", oci::media_type::lume_disk, pushed.value().digest);
  const double our_upload_known = seconds_since(start);
  if (!pushed_known) {
    fail(pushed_known.error().message());
  }

  // Download with our client.
  sync(); // earlier phases' writeback must not slow this one down
  start = Clock::now();
  auto downloaded = client.download_blob(repo, pushed.value(), work / "ours.back");
  const double our_download = seconds_since(start);
  if (!downloaded) {
    fail(downloaded.error().message());
  }
  std::remove((work / "ours.back").c_str());
  const long our_rss = peak_rss_kib(RUSAGE_SELF);

  // skopeo: upload a different blob of the same size (no blob reuse), then download ours.
  write_skopeo_dir(work / "skopeo-src", work / "theirs.bin", theirs_hex, bytes);
  sync(); // earlier phases' writeback must not slow this one down
  start = Clock::now();
  auto up = test::run_command({k_skopeo,
                               "copy",
                               "--quiet",
                               "--preserve-digests",
                               server->skopeo_trust("dest-"),
                               "dir:" + (work / "skopeo-src"),
                               "docker://" + server->host() + "/bench/theirs:v1"});
  const double skopeo_upload = seconds_since(start);
  if (up.exit_status != 0) {
    fail("skopeo upload failed: " + up.stderr_text);
  }
  sync(); // earlier phases' writeback must not slow this one down
  start = Clock::now();
  auto down = test::run_command({k_skopeo,
                                 "copy",
                                 "--quiet",
                                 server->skopeo_trust("src-"),
                                 "docker://" + repo.str(),
                                 "dir:" + (work / "skopeo-dst")});
  const double skopeo_download = seconds_since(start);
  if (down.exit_status != 0) {
    fail("skopeo download failed: " + down.stderr_text);
  }
  const long skopeo_rss = peak_rss_kib(RUSAGE_CHILDREN); // largest waited-for child: skopeo

  auto rate = [&](double seconds) { return static_cast<double>(mib) / seconds; };
  std::printf("blob size            %llu MiB\n", static_cast<unsigned long long>(mib));
  std::printf("upload   ours        %8.1f MiB/s  (%.3f s, includes the hashing pass)\n",
              rate(our_upload),
              our_upload);
  std::printf("upload   ours (known digest) %.1f MiB/s  (%.3f s)\n",
              rate(our_upload_known),
              our_upload_known);
  std::printf("upload   skopeo      %8.1f MiB/s  (%.3f s)\n", rate(skopeo_upload), skopeo_upload);
  std::printf("download ours        %8.1f MiB/s  (%.3f s)\n", rate(our_download), our_download);
  std::printf(
      "download skopeo      %8.1f MiB/s  (%.3f s)\n", rate(skopeo_download), skopeo_download);
  std::printf("peak RSS ours        %8.1f MiB\n", static_cast<double>(our_rss) / 1024.0);
  std::printf("peak RSS skopeo      %8.1f MiB\n", static_cast<double>(skopeo_rss) / 1024.0);
  std::cout << nlohmann::json{{"mib", mib},
                              {"upload_mib_s",
                               {{"ours", rate(our_upload)},
                                {"ours_known_digest", rate(our_upload_known)},
                                {"skopeo", rate(skopeo_upload)}}},
                              {"download_mib_s",
                               {{"ours", rate(our_download)}, {"skopeo", rate(skopeo_download)}}},
                              {"peak_rss_mib",
                               {{"ours", our_rss / 1024.0}, {"skopeo", skopeo_rss / 1024.0}}}}
                   .dump()
            << '\n';
  return 0;
}

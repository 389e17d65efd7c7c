// Blob transfer throughput through a loopback docker-registry serving TLS: our RegistryClient
// (downloads over util::download with four connections and with one) against curl's monolithic
// upload (POST, then `PUT -T` with ?digest=) and `skopeo copy`, in the same run, plus the peak
// RSS of ours and skopeo's. Each side runs --runs
// times, interleaved (ours, then skopeo, in every round) so a noisy neighbour hits both; the
// medians are printed, and the last line is a one-line JSON summary. Run manually:
//   build/tests/bench/registry_transfer_bench [--mib 256] [--runs 5]
// ctest runs it only as a smoke test, --mib 4 --runs 1. Exit 77 (skipped) without docker-registry
// or skopeo, unless CI=true.
#include "oci/manifest.hpp"
#include "oci/registry_client.hpp"
#include "support/bench_arguments.hpp"
#include "support/random_file.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

#include <nlohmann/json.hpp>

#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <vector>

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

/// Seconds of each timed phase, one entry per round.
struct Timings {
  std::vector<double> upload, upload_known, curl_upload, download, download_single, skopeo_upload,
      skopeo_download;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

/// Starts a timed phase after the earlier phases' writeback, so it does not slow this one.
Clock::time_point start_phase() {
  sync();
  return Clock::now();
}

/// Our three phases of one round: upload hashed while sent, upload with the digest known (as
/// when it was computed while compressing), download. Each upload goes to a new repository so
/// the registry cannot skip it.
/// curl's monolithic upload of the same blob: POST, then one `PUT -T` with ?digest=.
void run_curl(const test::RegistryServer& server,
              const test::TempDir& work,
              const oci::Descriptor& blob,
              int round,
              Timings& t) {
  const std::string base = server.url() + "/v2/bench/curl-" + std::to_string(round);
  auto start = start_phase();
  auto post = test::run_command({"/usr/bin/curl",
                                 "-sS",
                                 "--cacert",
                                 server.ca_file(),
                                 "-X",
                                 "POST",
                                 "-D",
                                 "-",
                                 "-o",
                                 "/dev/null",
                                 base + "/blobs/uploads/"});
  std::string location;
  for (std::size_t at = 0; at < post.stdout_text.size();) {
    const auto end = post.stdout_text.find('\n', at);
    const std::string line = post.stdout_text.substr(at, end - at);
    if (line.size() > 10 && strncasecmp(line.c_str(), "location: ", 10) == 0) {
      location = line.substr(10, line.find_last_not_of("\r") - 9);
    }
    at = end == std::string::npos ? end : end + 1;
  }
  if (location.empty()) {
    fail("curl POST gave no Location: " + post.stdout_text + post.stderr_text);
  }
  if (location.front() == '/') {
    location = server.url() + location;
  }
  location += (location.find('?') == std::string::npos ? "?" : "&") + std::string("digest=") +
              blob.digest.str();
  auto put = test::run_command({"/usr/bin/curl",
                                "-sS",
                                "-f",
                                "--cacert",
                                server.ca_file(),
                                "-H",
                                "Content-Type: application/octet-stream",
                                "-T",
                                work / "ours.bin",
                                location});
  t.curl_upload.push_back(seconds_since(start));
  if (put.exit_status != 0) {
    fail("curl PUT failed: " + put.stderr_text);
  }
}

void run_ours(oci::RegistryClient& client,
              oci::RegistryClient& single,
              const test::RegistryServer& server,
              const test::TempDir& work,
              const oci::Reference& download_repo,
              const oci::Descriptor& blob,
              int round,
              Timings& t) {
  const auto repo =
      oci::parse_reference(server.host() + "/bench/ours-" + std::to_string(round) + ":v1")
          .value_or_throw();
  auto start = start_phase();
  auto pushed = client.push_blob_file(repo, work / "ours.bin", oci::media_type::lume_disk);
  t.upload.push_back(seconds_since(start));
  if (!pushed) {
    fail(pushed.error().message());
  }
  if (pushed.value().digest != blob.digest) {
    fail("uploaded digest differs");
  }
  const auto repo_known =
      oci::parse_reference(server.host() + "/bench/ours-known-" + std::to_string(round) + ":v1")
          .value_or_throw();
  start = start_phase();
  auto known =
      client.push_blob_file(repo_known, work / "ours.bin", oci::media_type::lume_disk, blob.digest);
  t.upload_known.push_back(seconds_since(start));
  if (!known) {
    fail(known.error().message());
  }
  start = start_phase();
  auto downloaded = client.download_blob(download_repo, blob, work / "ours.back");
  t.download.push_back(seconds_since(start));
  if (!downloaded) {
    fail(downloaded.error().message());
  }
  std::remove((work / "ours.back").c_str());
  start = start_phase();
  downloaded = single.download_blob(download_repo, blob, work / "ours.back");
  t.download_single.push_back(seconds_since(start));
  if (!downloaded) {
    fail(downloaded.error().message());
  }
  std::remove((work / "ours.back").c_str());
}

/// skopeo's two phases of one round: upload a blob of its own, new in every round (skopeo
/// remembers where it pushed a blob and would mount it instead of uploading), download ours.
void run_skopeo(const test::RegistryServer& server,
                const test::TempDir& work,
                const oci::Reference& download_repo,
                std::uint64_t mib,
                int round,
                Timings& t) {
  const std::string hex =
      test::write_random_file(work / "theirs.bin", mib, static_cast<std::uint64_t>(100 + round));
  write_skopeo_dir(work / "skopeo-src", work / "theirs.bin", hex, mib << 20);
  auto start = start_phase();
  auto up = test::run_command(
      {k_skopeo,
       "copy",
       "--quiet",
       "--preserve-digests",
       server.skopeo_trust("dest-"),
       "dir:" + (work / "skopeo-src"),
       "docker://" + server.host() + "/bench/theirs-" + std::to_string(round) + ":v1"});
  t.skopeo_upload.push_back(seconds_since(start));
  if (up.exit_status != 0) {
    fail("skopeo upload failed: " + up.stderr_text);
  }
  start = start_phase();
  auto down = test::run_command({k_skopeo,
                                 "copy",
                                 "--quiet",
                                 server.skopeo_trust("src-"),
                                 "docker://" + download_repo.str(),
                                 "dir:" + (work / "skopeo-dst")});
  t.skopeo_download.push_back(seconds_since(start));
  if (down.exit_status != 0) {
    fail("skopeo download failed: " + down.stderr_text);
  }
  test::run_command({"/bin/rm", "-rf", work / "skopeo-dst", work / "skopeo-src"});
}

/// The image skopeo downloads: our blob with a Lume config, under bench/ours:v1.
oci::Descriptor seed_download_image(oci::RegistryClient& client,
                                    const oci::Reference& repo,
                                    const test::TempDir& work) {
  auto pushed = client.push_blob_file(repo, work / "ours.bin", oci::media_type::lume_disk);
  if (!pushed) {
    fail(pushed.error().message());
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
  return pushed.value();
}

void print_summary(std::uint64_t mib, const Timings& t, long our_rss, long skopeo_rss) {
  const int runs = static_cast<int>(t.upload.size());
  auto rate = [&](double seconds) { return static_cast<double>(mib) / seconds; };
  std::printf("blob size            %llu MiB, %d runs per side, medians\n",
              static_cast<unsigned long long>(mib),
              runs);
  const auto line = [&](const char* name, const std::vector<double>& seconds) {
    std::printf("%-34s %8.1f MiB/s  (median of", name, rate(median(seconds)));
    for (double each : seconds) {
      std::printf(" %.1f", rate(each));
    }
    std::printf(")\n");
  };
  line("upload   ours", t.upload);
  line("upload   ours (known digest)", t.upload_known);
  line("upload   curl POST + PUT -T", t.curl_upload);
  line("upload   skopeo", t.skopeo_upload);
  line("download ours, util::download x4", t.download);
  line("download ours, util::download x1", t.download_single);
  line("download skopeo", t.skopeo_download);
  const double up = median(t.upload), up_known = median(t.upload_known), down = median(t.download),
               skopeo_up = median(t.skopeo_upload), skopeo_down = median(t.skopeo_download);
  std::printf("peak RSS ours        %8.1f MiB\n", static_cast<double>(our_rss) / 1024.0);
  std::printf("peak RSS skopeo      %8.1f MiB\n", static_cast<double>(skopeo_rss) / 1024.0);
  std::cout << nlohmann::json{{"mib", mib},
                              {"runs", runs},
                              {"upload_mib_s",
                               {{"ours", rate(up)},
                                {"ours_known_digest", rate(up_known)},
                                {"curl", rate(median(t.curl_upload))},
                                {"skopeo", rate(skopeo_up)}}},
                              {"download_mib_s",
                               {{"ours", rate(down)},
                                {"ours_single_connection", rate(median(t.download_single))},
                                {"skopeo", rate(skopeo_down)}}},
                              {"ratio",
                               {{"upload", skopeo_up / up}, {"download", skopeo_down / down}}},
                              {"peak_rss_mib",
                               {{"ours", our_rss / 1024.0}, {"skopeo", skopeo_rss / 1024.0}}}}
                   .dump()
            << '\n';
}

} // namespace

int main(int argc, char** argv) {
  const test::BenchArguments arguments =
      test::parse_bench_arguments(argc, argv, "registry_transfer_bench", {});
  const std::uint64_t mib = arguments.mib;
  const int runs = arguments.runs;
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
  test::write_random_file(work / "ours.bin", mib, 1);

  oci::RegistryClient client(server->client_options()); // TLS, trusting the throwaway CA
  auto single_options = server->client_options();
  single_options.download_connections = 1;
  oci::RegistryClient single(single_options);
  const auto download_repo =
      oci::parse_reference(server->host() + "/bench/ours:v1").value_or_throw();
  const oci::Descriptor blob = seed_download_image(client, download_repo, work);
  Timings t;
  for (int round = 0; round < runs; ++round) {
    run_ours(client, single, *server, work, download_repo, blob, round, t);
    run_curl(*server, work, blob, round, t);
    run_skopeo(*server, work, download_repo, mib, round, t);
  }
  print_summary(mib, t, peak_rss_kib(RUSAGE_SELF), peak_rss_kib(RUSAGE_CHILDREN));
  return 0;
}

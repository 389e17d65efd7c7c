// Issue 32, "fetch at least as fast as curl": one artifact over loopback HTTPS (the artifact
// server on the throwaway CA) fetched by lume-unlock (into an empty content-addressed cache,
// SHA-256 verified, over several connections where ranges are accepted), against `curl -o` and
// then `sha256sum` of the same bytes, in the same run, alternating, several runs each; medians
// and each side's peak RSS (every side runs as its own child process, measured with wait4, so
// the in-process server never counts). Our fetch over one connection is shown for reference.
// Run manually:
//   build/tests/bench/artifact_fetch_bench [--mib 256] [--runs 5]
// ctest runs it only as a smoke test, --mib 4 --runs 1. Exit 77 (skipped) without curl or
// sha256sum, unless CI=true.
#include "fetch/fetch.hpp"
#include "support/artifact_server.hpp"
#include "support/bench_arguments.hpp"
#include "support/process.hpp"
#include "support/random_file.hpp"
#include "support/temp_dir.hpp"
#include "support/test_ca.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <vector>

namespace {

using namespace lume_unlock;
using Clock = std::chrono::steady_clock;

const char* const k_curl = "/usr/bin/curl";
const char* const k_sha256sum = "/usr/bin/sha256sum";

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "artifact_fetch_bench: " << what << '\n';
  std::exit(1);
}

struct Run {
  double seconds = 0;
  long rss_kib = 0;
};

/// Runs `body` in a child process; its wall time (fork to exit) and its own peak RSS.
template <typename Body>
Run in_child(Body body) {
  std::fflush(stdout); // or a child that reopens stdout writes this process's pending lines too
  const auto start = Clock::now();
  const pid_t child = ::fork();
  if (child < 0) {
    fail(std::string("fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    std::_Exit(body());
  }
  int status = 0;
  rusage usage{};
  ::wait4(child, &status, 0, &usage);
  Run run{std::chrono::duration<double>(Clock::now() - start).count(), usage.ru_maxrss};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fail("a measured child failed");
  }
  return run;
}

/// A program run to completion in a child (no shell), stdout to /dev/null or `out`.
Run program(const std::vector<std::string>& argv, const std::string& out = "/dev/null") {
  return in_child([&] {
    std::FILE* sink = std::freopen(out.c_str(), "w", stdout);
    if (sink == nullptr) {
      return 1;
    }
    std::vector<char*> args;
    for (const auto& arg : argv) {
      args.push_back(const_cast<char*>(arg.c_str()));
    }
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    return 127;
  });
}

/// Our fetch, as create runs it: an empty cache, the digest pinned, the default connections.
Run ours(const std::string& url,
         const std::string& sha256,
         const std::string& ca_file,
         const std::string& cache_dir,
         unsigned connections) {
  return in_child([&] {
    try {
      fetch::BlobCache cache(cache_dir);
      util::HttpClientOptions options;
      options.ca_file = ca_file;
      util::HttpClient http(options);
      fetch::FetchRequest request;
      request.source = fetch::parse_https_source(url).value_or_throw();
      request.sha256 = sha256;
      request.label = "model.gguf";
      request.connections = connections;
      auto fetched = fetch::fetch_artifact(request, cache, {http, nullptr, {}, {}, {}});
      if (!fetched) {
        std::cerr << "artifact_fetch_bench: ours: " << fetched.error().message() << '\n';
        return 1;
      }
      return fetched.value().sha256 == sha256 ? 0 : 1;
    } catch (const Error& e) {
      std::cerr << "artifact_fetch_bench: ours: " << e.message() << '\n';
      return 1;
    }
  });
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const auto n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

} // namespace

int main(int argc, char** argv) {
  const test::BenchArguments options =
      test::parse_bench_arguments(argc, argv, "artifact_fetch_bench", {});
  const auto skip = [](const std::string& why) {
    std::cerr << "artifact_fetch_bench: skipped: " << why << '\n';
    return test::running_in_ci() ? 1 : 77;
  };
  for (const char* tool : {k_curl, k_sha256sum}) {
    if (access(tool, X_OK) != 0) {
      return skip(std::string(tool) + " is not installed");
    }
  }
  test::TempDir work("lume-unlock-fetch-bench");
  std::string why;
  auto ca = test::TestCa::create(why);
  if (!ca) {
    return skip(why);
  }
  auto server = test::ArtifactServer::start(*ca, why);
  if (!server) {
    return skip(why);
  }
  const std::string sha256 = test::write_random_file(work / "model.gguf", options.mib, 32);
  server->serve_file("/model.gguf", work / "model.gguf");
  const std::string url = server->url("/model.gguf");

  std::vector<double> parallel, single, curl, curl_sha;
  long parallel_rss = 0, single_rss = 0, curl_rss = 0, sha_rss = 0;
  for (int run = 0; run < options.runs; ++run) {
    const std::string round = work / ("run" + std::to_string(run));
    ::sync(); // the previous run's writeback must not slow this one down
    const Run p = ours(url, sha256, ca->ca_file(), round + "/parallel", 4);
    ::sync();
    const Run s = ours(url, sha256, ca->ca_file(), round + "/single", 1);
    ::sync();
    const Run c = program({k_curl, "-fsS", "--cacert", ca->ca_file(), "-o", round + ".curl", url});
    const Run h = program({k_sha256sum, round + ".curl"}, round + ".sum");
    const auto sum = test::run_command({"/bin/cat", round + ".sum"}).stdout_text;
    if (sum.rfind(sha256, 0) != 0) {
      fail("curl's copy has other bytes: " + sum);
    }
    test::run_command({"/bin/rm", "-rf", round, round + ".curl", round + ".sum"});
    parallel.push_back(p.seconds);
    single.push_back(s.seconds);
    curl.push_back(c.seconds);
    curl_sha.push_back(c.seconds + h.seconds);
    parallel_rss = std::max(parallel_rss, p.rss_kib);
    single_rss = std::max(single_rss, s.rss_kib);
    curl_rss = std::max(curl_rss, c.rss_kib);
    sha_rss = std::max(sha_rss, h.rss_kib);
    std::printf("run %u: ours %.3f s, ours one stream %.3f s, curl %.3f s + sha256sum %.3f s\n",
                run + 1,
                p.seconds,
                s.seconds,
                c.seconds,
                h.seconds);
  }
  const double mib = static_cast<double>(options.mib);
  const auto line = [&](const char* name, const std::vector<double>& times, long rss_kib) {
    const double m = median(times);
    std::printf("  %-26s %7.3f s  %8.1f MiB/s  peak RSS %6.1f MiB\n",
                name,
                m,
                mib / m,
                static_cast<double>(rss_kib) / 1024.0);
  };
  std::printf("artifact of %llu MiB over loopback HTTPS, median of %u runs\n",
              static_cast<unsigned long long>(options.mib),
              options.runs);
  line("lume-unlock fetch (4 conn)", parallel, parallel_rss);
  line("lume-unlock fetch (1 conn)", single, single_rss);
  line("curl -o", curl, curl_rss);
  line("curl -o + sha256sum", curl_sha, std::max(curl_rss, sha_rss));
  std::printf(
      "  ratio ours/(curl+sha256sum): %.2f; ours/curl alone: %.2f; one stream/(curl+sha256sum): "
      "%.2f\n",
      median(parallel) / median(curl_sha),
      median(parallel) / median(curl),
      median(single) / median(curl_sha));
  return 0;
}

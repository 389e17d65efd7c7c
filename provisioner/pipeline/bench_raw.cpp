#include "pipeline/bench_raw.hpp"

#include "provenance/provenance.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace lume_unlock::pipeline {

std::vector<BenchRawFile> bench_raw_files(const apply::GuestBench& measured,
                                          const std::optional<std::string>& host_json) {
  std::vector<BenchRawFile> files = {{"stock.json", measured.stock.stdout_text},
                                     {"stock.stderr", measured.stock.stderr_text},
                                     {"unlocked.json", measured.unlocked.stdout_text},
                                     {"unlocked.stderr", measured.unlocked.stderr_text}};
  if (host_json) {
    files.push_back({"host.json", *host_json});
  }
  return files;
}

std::vector<BenchRawFile> perplexity_raw_files(const apply::GuestPerplexity& measured,
                                               const std::optional<std::string>& host_output) {
  std::vector<BenchRawFile> files = {{"perplexity-stock.stdout", measured.stock.stdout_text},
                                     {"perplexity-stock.stderr", measured.stock.stderr_text},
                                     {"perplexity-unlocked.stdout", measured.unlocked.stdout_text},
                                     {"perplexity-unlocked.stderr", measured.unlocked.stderr_text}};
  if (host_output) {
    files.push_back({"host-perplexity.txt", *host_output});
  }
  return files;
}

nlohmann::json bench_raw_record(const std::vector<BenchRawFile>& files) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& file : files) {
    out[file.name] = {{"sha256", util::sha256_hex(file.bytes)}, {"size", file.bytes.size()}};
  }
  return out;
}

Result<std::string> bench_raw_dir(const std::string& state_dir, const std::string& vm) {
  LUME_UNLOCK_TRY_ASSIGN(auto record, provenance::provenance_path(state_dir, vm));
  return record.substr(0, record.rfind('/')) + "/bench";
}

Status write_bench_raw_files(const std::string& state_dir,
                             const std::string& vm,
                             const std::vector<BenchRawFile>& files) {
  LUME_UNLOCK_TRY_ASSIGN(auto dir, bench_raw_dir(state_dir, vm));
  LUME_UNLOCK_TRY(util::make_directories(dir, 0700));
  for (const auto& file : files) {
    LUME_UNLOCK_TRY(util::write_file_atomic(dir + "/" + file.name, file.bytes, 0644));
  }
  for (const char* name : k_bench_raw_names) {
    bool kept = false;
    for (const auto& file : files) {
      kept = kept || file.name == name;
    }
    const std::string path = dir + "/" + name;
    if (!kept && std::remove(path.c_str()) != 0 && errno != ENOENT) {
      return Error(ErrorCategory::failure,
                   "removing the earlier bench output '" + path + "'",
                   std::strerror(errno));
    }
  }
  return ok_status();
}

} // namespace lume_unlock::pipeline

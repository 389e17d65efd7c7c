#pragma once
// A report composed for the renderer tests: one VM, a bench of two tests with a host run, and
// one without a bench, built through report::build_report from records written here.
#include "report/report.hpp"

#include <nlohmann/json.hpp>

namespace lume_unlock::report {

inline provenance::Provenance composed_record(bool with_bench) {
  provenance::Provenance record;
  record.vm = "demo";
  record.image = provenance::ImageInfo{std::string("ghcr.io/acme/tahoe:1"),
                                       "sha256:" + std::string(64, 'a'),
                                       std::nullopt,
                                       std::nullopt};
  record.guest = provenance::GuestInfo{
      std::string("macOS"), std::string("26.1"), std::string("25B78"), std::string("arm64")};
  record.shim = provenance::ShimInfo{};
  record.shim->profile = provenance::ShimProfile{1009, 65536};
  record.shim->files = std::vector<provenance::FileHash>{
      {"/Users/lume/Library/Application Support/LumeUnlock/shim/x/liblume-unlock-shim.dylib",
       std::string(64, 'b')}};
  record.probe = provenance::ProbeInfo{
      nlohmann::json::parse(
          R"({"families":{"1007":false,"1009":false},"max_threadgroup_memory":32768})"),
      nlohmann::json::parse(
          R"({"families":{"1007":true,"1009":true},"max_threadgroup_memory":65536})")};
  if (with_bench) {
    record.bench = nlohmann::json::parse(R"({
      "measured_at": "2026-12-03T10:00:00Z", "entry": "llama-bench", "model": "/m/q.gguf",
      "arguments": {"prompt": 512, "gen": 128, "repetitions": 3},
      "build_commit": "ee3d1b54c", "model_type": "llama 1B Q4_K - Medium",
      "backends": "MTL,BLAS", "gpu": "Apple Paravirtual device", "host_chip": "Apple M1 Ultra",
      "host_source": "--host-json host.json",
      "tests": [
        {"test": "pp512", "kind": "pp", "stock_ts": 50.0, "stock_stddev_ts": 0.5,
         "unlocked_ts": 450.0, "unlocked_stddev_ts": 4.25, "speedup": 9.0,
         "host_ts": 500.0, "host_stddev_ts": 2.0, "host_ratio": 0.9},
        {"test": "tg128", "kind": "tg", "stock_ts": 3.0, "stock_stddev_ts": 0.1,
         "unlocked_ts": 36.0, "unlocked_stddev_ts": 0.3, "speedup": 12.0,
         "host_ts": 48.0, "host_stddev_ts": 0.2, "host_ratio": 0.75}],
      "log": {"stock": "stock", "unlocked": "fast"},
      "thresholds": {"min_speedup": 5.0}, "passed": true, "failures": [],
      "perplexity": {"context": 512, "batch": 512, "max_drift": 0.02,
        "stock": {"estimate": 9.869, "uncertainty": 0.41, "chunks": [9.7021, 9.869]},
        "unlocked": {"estimate": 9.873, "uncertainty": 0.41, "chunks": [9.7049, 9.873]},
        "drift": 0.000405}})");
  }
  return record;
}

inline nlohmann::json composed_report(bool with_bench) {
  ReportInputs inputs;
  inputs.record = composed_record(with_bench);
  inputs.generated_at = "2026-12-04T12:00:00Z";
  inputs.tool_version = "0.0.0-test";
  inputs.raw = {{"provenance.json", "/state/vms/demo/provenance.json", "{}"}};
  return build_report(inputs);
}

} // namespace lume_unlock::report

#include "composed_report.hpp"
#include "report/report.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::report {
namespace {

TEST(ReportDocument, CarriesTheRecordsFactsAndFiguresUnchanged) {
  const auto record = composed_record(true);
  const auto report = composed_report(true);
  EXPECT_EQ(report["schema"], "lume-unlock/report/v1");
  EXPECT_EQ(report["vm"], "demo");
  EXPECT_EQ(report["image"], provenance::to_json(record)["image"]);
  EXPECT_EQ(report["guest"], provenance::to_json(record)["guest"]);
  EXPECT_EQ(report["profile"],
            nlohmann::json({{"apple_family_max", 1009}, {"max_threadgroup_memory", 65536}}));
  EXPECT_EQ(report["shim"]["files"], provenance::to_json(record)["shim"]["files"]);
  EXPECT_EQ(report["bench"]["tests"], (*record.bench)["tests"]);
  EXPECT_EQ(report["bench"]["ran"], true);
  EXPECT_EQ(report["host"]["bench_gpu_info"],
            nlohmann::json({{"value", "Apple M1 Ultra"},
                            {"source",
                             "llama-bench's gpu_info in the host run (--host-json "
                             "host.json)"}}));
  EXPECT_EQ(report["raw_inputs"][0],
            nlohmann::json({{"name", "provenance.json"},
                            {"source", "/state/vms/demo/provenance.json"},
                            {"sha256", util::sha256_hex("{}")},
                            {"size", 2}}));
}

TEST(ReportDocument, ComparesEachProbeFamilyAndTheThreadgroupMemory) {
  const auto report = composed_report(false);
  EXPECT_EQ(report["probe"]["families"],
            nlohmann::json::parse(R"([{"family":"1007","stock":false,"unlocked":true},
                                      {"family":"1009","stock":false,"unlocked":true}])"));
  EXPECT_EQ(report["probe"]["threadgroup_memory"],
            nlohmann::json({{"stock", 32768}, {"unlocked", 65536}}));
  // A family only one side names is null on the other.
  EXPECT_EQ(compare_probe_families(nlohmann::json::parse(R"({"families":{"1001":true}})"),
                                   nlohmann::json()),
            nlohmann::json::parse(R"([{"family":"1001","stock":true,"unlocked":null}])"));
}

TEST(ReportDocument, SaysWhatIsMissingInsteadOfInventingIt) {
  auto inputs = ReportInputs{};
  inputs.record.vm = "bare";
  inputs.lume_problem = "GET /lume/vms/bare: connection refused";
  const auto report = build_report(inputs);
  EXPECT_EQ(report["bench"]["ran"], false);
  EXPECT_EQ(report["lume"],
            nlohmann::json({{"source",
                             "the provenance record's hardware (Lume did not answer: "
                             "GET /lume/vms/bare: connection refused)"}}));
  EXPECT_EQ(report["host"], nlohmann::json({{"mac", false}}));
  EXPECT_EQ(report["probe"]["families"], nlohmann::json::array());
  EXPECT_EQ(report["notes"],
            nlohmann::json({"the report was written on a host that is not a Mac: its macOS "
                            "version, chip and GPU cores are absent",
                            "the record holds no probe answers: run 'lume-unlock verify bare'",
                            "no bench run is recorded for VM 'bare': run 'lume-unlock bench bare "
                            "--model PATH' (or create --bench with a recipe's bench: block)"}));
}

TEST(ReportDocument, LumeSettingsComeFromLumeWhenItAnswers) {
  ReportInputs inputs;
  inputs.record.vm = "demo";
  lume::VmDetails vm;
  vm.cpu_count = 8;
  vm.memory_size = 16ull << 30;
  vm.disk_size.total = 80ull << 30;
  inputs.lume_vm = vm;
  EXPECT_EQ(build_report(inputs)["lume"],
            nlohmann::json({{"cpu", 8},
                            {"memory_bytes", 16ull << 30},
                            {"disk_bytes", 80ull << 30},
                            {"source", "GET /lume/vms/demo"}}));
}

} // namespace
} // namespace lume_unlock::report

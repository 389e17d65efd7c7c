#include "report/report.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::report {
namespace {

TEST(HostFacts, GpuCoresAreReadFromSystemProfilersJson) {
  EXPECT_EQ(gpu_cores_from_system_profiler(
                R"({"SPDisplaysDataType":[{"_name":"Apple M1 Ultra","sppci_cores":"48"}]})"),
            48);
  EXPECT_EQ(gpu_cores_from_system_profiler(R"({"SPDisplaysDataType":[{"sppci_cores":64}]})"), 64);
  EXPECT_EQ(gpu_cores_from_system_profiler(R"({"SPDisplaysDataType":[{"_name":"x"}]})"),
            std::nullopt);
  EXPECT_EQ(gpu_cores_from_system_profiler(R"({"SPDisplaysDataType":[{"sppci_cores":"many"}]})"),
            std::nullopt);
  EXPECT_EQ(gpu_cores_from_system_profiler("not json"), std::nullopt);
}

TEST(HostFacts, FactsAreTrimmedAndEmptyOnesAbsent) {
  EXPECT_EQ(trimmed_fact("26.1\n"), "26.1");
  EXPECT_EQ(trimmed_fact("\n"), std::nullopt);
  HostFacts facts;
  EXPECT_EQ(to_json(facts), nlohmann::json({{"mac", false}}));
  facts.mac = true;
  facts.chip = "Apple M1 Ultra";
  facts.gpu_cores = 48;
  EXPECT_EQ(to_json(facts),
            nlohmann::json({{"mac", true}, {"chip", "Apple M1 Ultra"}, {"gpu_cores", 48}}));
}

} // namespace
} // namespace lume_unlock::report

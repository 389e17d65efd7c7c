#include "composed_report.hpp"
#include "report/report.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::report {
namespace {

const std::string k_shim =
    "/Users/lume/Library/Application Support/LumeUnlock/shim/x/liblume-unlock-shim.dylib";

nlohmann::json report_with_artifact() {
  auto report = composed_report(false);
  report["artifacts"] = nlohmann::json::parse(
      R"([{"source":"file:/srv/m.gguf","sha256":")" + std::string(64, 'c') +
      R"(","size":4,"dest":"/m","unpack":"none","files":[{"path":"/m/q.gguf","sha256":")" +
      std::string(64, 'd') + R"(","size":4}]}])");
  return report;
}

ObservedVm matching(const nlohmann::json& report) {
  ObservedVm now;
  now.image_digest = report["image"]["digest"].get<std::string>();
  now.file_sha256 = {{k_shim, std::string(64, 'b')}, {"/m/q.gguf", std::string(64, 'd')}};
  now.probe_stock = report["probe"]["stock"];
  now.probe_unlocked = report["probe"]["unlocked"];
  return now;
}

std::vector<std::string> differing(const std::vector<CheckItem>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    if (!item.ok()) {
      out.push_back(item.item + ": " + item.expected + " / " + item.found);
    }
  }
  return out;
}

TEST(ReportCheck, TheSameVmMatchesEveryItem) {
  const auto report = report_with_artifact();
  const auto items = compare_report(report, matching(report));
  EXPECT_TRUE(differing(items).empty());
  // image, one shim file, one artifact file, two families and the threadgroup memory per side.
  EXPECT_EQ(items.size(), 9u);
  EXPECT_EQ(report_guest_files(report), (std::vector<std::string>{k_shim, "/m/q.gguf"}));
}

TEST(ReportCheck, NamesEachDifferenceWithTheReportsValueAndTheVms) {
  const auto report = report_with_artifact();
  ObservedVm now = matching(report);
  now.image_digest = "sha256:" + std::string(64, 'e');
  now.file_sha256.erase("/m/q.gguf");
  now.file_sha256[k_shim] = std::string(64, 'f');
  now.probe_unlocked["families"]["1009"] = false;
  now.probe_unlocked["max_threadgroup_memory"] = 32768;
  EXPECT_EQ(
      differing(compare_report(report, now)),
      (std::vector<std::string>{
          "image digest: sha256:" + std::string(64, 'a') + " / sha256:" + std::string(64, 'e'),
          "shim file " + k_shim + ": " + std::string(64, 'b') + " / " + std::string(64, 'f'),
          "artifact file /m/q.gguf: " + std::string(64, 'd') + " / missing",
          "probe unlocked family 1009: true / false",
          "probe unlocked threadgroup memory: 65536 / 32768"}));
}

TEST(ReportCheck, ParseRefusesWhatIsNotAReport) {
  EXPECT_EQ(parse_report("[]", "'r.json'").error().message(),
            "report 'r.json': /: expected an object, got an array");
  const auto other = parse_report(R"({"schema":"lume-unlock/provenance/v1"})", "'r.json'");
  EXPECT_EQ(other.error().message(),
            "report 'r.json': /schema: expected 'lume-unlock/report/v1', got "
            "'lume-unlock/provenance/v1'");
  EXPECT_EQ(other.error().hint(), "check a folder that 'lume-unlock report' wrote");
  auto report = composed_report(false);
  report["shim"]["files"][0].erase("sha256");
  auto parsed = parse_report(report.dump(), "'r.json'");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message(),
            "report 'r.json': /shim/files/0/sha256: missing (expected a string)");
  EXPECT_EQ(parsed.error().category(), ErrorCategory::verification);
  EXPECT_EQ(parsed.error().hint(), "write it again with 'lume-unlock report NAME --out DIR'");
  auto artifacts = report_with_artifact();
  artifacts["artifacts"][0]["files"] = 7;
  EXPECT_EQ(parse_report(artifacts.dump(), "'r.json'").error().why(),
            "/artifacts/0/files: expected an array, got an integer");
  EXPECT_TRUE(parse_report(composed_report(true).dump(), "'r.json'").ok());
  // A link has its target instead of a sha256: --check compares the target.
  artifacts["artifacts"][0]["files"] = {{{"path", "/m/q.gguf"}, {"link", "/shared/q.gguf"}}};
  EXPECT_TRUE(parse_report(artifacts.dump(), "'r.json'").ok());
}

} // namespace
} // namespace lume_unlock::report

#include "pipeline/plan.hpp"
#include "pipeline/vm_state.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::pipeline {
namespace {

Plan three_step_plan(std::vector<std::string>& ran, bool fail_second) {
  Plan plan("create");
  plan.add(Step::observed_as("image", "pull a:1 into 'vm'", true, ".manifest-digest matches", [&] {
    ran.push_back("image");
    return StepResult{};
  }));
  plan.add(Step::observed_as(
      "resize", "set 8 vCPU / 16GB", false, "4 vCPU / 8GB now", [&, fail_second]() -> StepResult {
        ran.push_back("resize");
        if (fail_second) {
          throw Error(ErrorCategory::lume_api, "PATCH /lume/vms/vm", "HTTP 500: boom");
        }
        return {true, "8 vCPU / 16GB"};
      }));
  plan.add(Step::unobserved("shim", "install the shim", [&] {
    ran.push_back("shim");
    return StepResult{false, "already installed"};
  }));
  return plan;
}

TEST(Plan, SkipsStepsInPlaceAndReportsOutcomes) {
  std::vector<std::string> ran;
  Plan plan = three_step_plan(ran, false);
  std::vector<StepReport> reports;
  std::vector<std::string> events;
  plan.apply(
      [&](const util::ProgressEvent& e) { events.push_back(e.step + (e.finished ? " done" : "")); },
      "lume-unlock create vm",
      reports);
  EXPECT_EQ(ran, (std::vector<std::string>{"resize", "shim"}));
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_EQ(reports[0].outcome, StepOutcome::unchanged);
  EXPECT_EQ(reports[0].summary, ".manifest-digest matches");
  EXPECT_EQ(reports[1].outcome, StepOutcome::changed);
  EXPECT_EQ(reports[2].outcome, StepOutcome::unchanged);
  EXPECT_EQ(reports_to_json(reports)["changed"], 1);
  EXPECT_EQ(events,
            (std::vector<std::string>{"image done", "resize", "resize done", "shim", "shim done"}));
}

TEST(Plan, FailureNamesTheStepAndHowToResume) {
  std::vector<std::string> ran;
  Plan plan = three_step_plan(ran, true);
  std::vector<StepReport> reports;
  try {
    plan.apply({}, "lume-unlock create vm", reports);
    FAIL() << "apply did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::lume_api);
    EXPECT_EQ(e.message(), "create step 'resize': PATCH /lume/vms/vm: HTTP 500: boom");
    EXPECT_EQ(e.hint(), "re-run 'lume-unlock create vm' to resume from this step");
  }
  EXPECT_EQ(ran, (std::vector<std::string>{"resize"}));
  EXPECT_EQ(reports[1].outcome, StepOutcome::failed);
  EXPECT_EQ(reports[2].outcome, StepOutcome::not_run);
}

TEST(Plan, PrintsADryRun) {
  std::vector<std::string> ran;
  Plan plan = three_step_plan(ran, false);
  EXPECT_EQ(plan.to_text(),
            "  [in place] image: pull a:1 into 'vm' (.manifest-digest matches)\n"
            "  [to do]    resize: set 8 vCPU / 16GB (4 vCPU / 8GB now)\n"
            "  [check]    shim: install the shim\n");
  auto json = plan.to_json();
  EXPECT_EQ(json["plan"], "create");
  EXPECT_EQ(json["steps"][0]["in_place"], true);
  EXPECT_TRUE(json["steps"][2]["in_place"].is_null());
  EXPECT_EQ(json["no_op"], false);
  EXPECT_TRUE(ran.empty());
}

TEST(Plan, IsANoOpOnlyWhenEveryStepIsKnownToBeInPlace) {
  const auto step = [](const std::string& id, std::optional<bool> in_place) {
    return Step::observed_as(id, "do " + id, in_place, {}, [] { return StepResult{true, "done"}; });
  };
  Plan plan("remove");
  EXPECT_TRUE(plan.no_op());
  plan.add(step("agents", true));
  plan.add(step("files", true));
  EXPECT_TRUE(plan.no_op());
  EXPECT_EQ(plan.to_json()["no_op"], true);
  plan.add(step("record", std::nullopt));
  EXPECT_FALSE(plan.no_op()) << "a step that can only be checked when applied may change";
  Plan to_do("remove");
  to_do.add(Step::to_do("agents", "do agents", [] { return StepResult{true, "done"}; }));
  EXPECT_EQ(to_do.to_text(), "  [to do]    agents: do agents\n");
  EXPECT_FALSE(to_do.no_op());
  EXPECT_EQ(to_do.to_json()["no_op"], false);
}

// The guest's copy of the provenance record sits in the support folder of the guest user's home
// (this assertion stood on GuestLayout::provenance_json_path, which nothing used).
TEST(GuestRecordPath, IsInTheSupportFolder) {
  EXPECT_EQ(guest_record_path("/Users/Jane Doe"),
            "/Users/Jane Doe/Library/Application Support/LumeUnlock/provenance.json");
}

} // namespace
} // namespace lume_unlock::pipeline

#include "cli/plan_runner.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace lume_unlock::cli {
namespace {

pipeline::Plan two_steps(bool fail) {
  pipeline::Plan plan("create");
  plan.add(pipeline::Step::observed_as("image", "pull the image", true, "VM holds it", {}));
  plan.add(pipeline::Step::unobserved("boot", "boot the VM", [fail]() -> pipeline::StepResult {
    if (fail) {
      throw Error(ErrorCategory::lume_api, "boot", "Lume said no", "start Lume");
    }
    return {true, "booted"};
  }));
  return plan;
}

TEST(PlanRunner, ADryRunIsOneJsonShapeWithTheCommandsOwnKeys) {
  std::ostringstream out, err;
  Context context(out, err, false, false);
  context.global.json = true;
  print_dry_run(context, two_steps(false), "vm1", "create 'vm1'", {{"bundle_source", "x"}});
  EXPECT_EQ(nlohmann::json::parse(out.str()),
            nlohmann::json({{"plan", "create"},
                            {"steps",
                             {{{"id", "image"},
                               {"description", "pull the image"},
                               {"in_place", true},
                               {"observed", "VM holds it"}},
                              {{"id", "boot"},
                               {"description", "boot the VM"},
                               {"in_place", nullptr},
                               {"observed", ""}}}},
                            {"no_op", false},
                            {"vm", "vm1"},
                            {"dry_run", true},
                            {"bundle_source", "x"}}));
}

TEST(PlanRunner, ADryRunAsTextNamesTheCommandAndListsEveryStep) {
  std::ostringstream out, err;
  Context context(out, err, false, false);
  print_dry_run(context, two_steps(false), "vm1", "create 'vm1'", {}, "; bundle from b");
  EXPECT_EQ(out.str(),
            "create 'vm1' would run (dry run, nothing changed; bundle from b):\n"
            "  [in place] image: pull the image (VM holds it)\n"
            "  [check]    boot: boot the VM\n");
}

TEST(PlanRunner, AFailedStepNamesTheResumeCommandAndTheCountsAreLoggedEitherWay) {
  std::ostringstream out, err;
  Context context(out, err, false, false);
  context.global.verbosity = Verbosity::verbose;
  pipeline::Plan plan = two_steps(true);
  try {
    apply_plan(context,
               plan,
               {},
               "lume-unlock create vm1" + resume_flag("--from", "") +
                   resume_flag("--recipe", "r.yaml"),
               [] { return 7u; });
    FAIL() << "the boot step fails";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "create step 'boot': boot: Lume said no");
    EXPECT_EQ(e.hint(),
              "start Lume; then re-run 'lume-unlock create vm1 --recipe r.yaml' to resume from "
              "this step");
  }
  EXPECT_EQ(err.str(), "debug: SSH commands: 7, Lume requests: 0\n");

  std::ostringstream out2, err2;
  Context quiet(out2, err2, false, false);
  pipeline::Plan good = two_steps(false);
  const auto reports = apply_plan(quiet, good, {}, "lume-unlock create vm1", [] { return 0u; });
  EXPECT_EQ(with_reports({{"vm", "vm1"}}, reports)["changed"], 1);
  EXPECT_EQ(err2.str(), "") << "the counts are for --verbose";
}

} // namespace
} // namespace lume_unlock::cli

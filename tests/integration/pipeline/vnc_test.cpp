// A VM's VNC listener end to end (issue 45): lume-unlock starts its runs with "vnc":"disabled",
// so on Lume's main branch (lume-sim's default) the VM has no listener; `status` names a listener
// when there is one, and `doctor` warns when a Lume that predates the field (lume-sim
// --lume-version 0.5.3) keeps one for a VM lume-unlock started headless.
#include "pipeline_fixture.hpp"

namespace lume_unlock::test {
namespace {

nlohmann::json doctor_check(const CliRun& run, const std::string& name) {
  const nlohmann::json doc = json_of(run);
  for (const auto& check : doc.value("checks", nlohmann::json::array())) {
    if (check["name"] == name) {
      return check;
    }
  }
  ADD_FAILURE() << "no check '" << name << "' in " << run.out << run.err;
  return {};
}

class VncWorld : public PipelineWorld {
protected:
  CliRun doctor() { return cli({"doctor", "--bundle", SHIM_BUNDLE_DIR}, false, {"--json"}); }
};

TEST_F(VncWorld, AHeadlessVmHasNoListenerOnLumesMainBranch) {
  start_world();
  ASSERT_EQ(create().exit_code, 0);
  CliRun text = cli({"status", "vm1"});
  EXPECT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("\n  vnc    no VNC listener\n"), std::string::npos) << text.out;
  CliRun json = cli({"status", "vm1"}, true, {"--json"});
  EXPECT_EQ(json_of(json)["vnc"], nlohmann::json::parse(R"({"listening":false,"address":null})"))
      << json.out;
  const nlohmann::json check = doctor_check(doctor(), "vnc");
  EXPECT_EQ(check["status"], "ok") << check.dump();
  EXPECT_EQ(check["detail"], "no VM lume-unlock started headless has a VNC listener");
}

TEST_F(VncWorld, OnLume053StatusNamesTheListenerAndDoctorWarns) {
  start_world({"--lume-version", "0.5.3"});
  ASSERT_EQ(create().exit_code, 0);
  CliRun json = cli({"status", "vm1"}, true, {"--json"});
  const nlohmann::json vnc = json_of(json)["vnc"];
  ASSERT_EQ(vnc["listening"], true) << json.out;
  const std::string address = vnc["address"];
  EXPECT_EQ(address.rfind("127.0.0.1:", 0), 0u) << address;
  CliRun text = cli({"status", "vm1"});
  EXPECT_NE(text.out.find("\n  vnc    Lume's VNC server listens at " + address + "\n"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("vnc://"), std::string::npos) << "the VNC password is never printed";
  CliRun run = doctor();
  const nlohmann::json check = doctor_check(run, "vnc");
  EXPECT_EQ(check["status"], "warn") << check.dump();
  EXPECT_EQ(check["detail"],
            "Lume runs a VNC server for 'vm1' at " + address +
                ", though lume-unlock started it with \"vnc\": \"disabled\": this Lume predates "
                "the field (0.5.3 ignores it and listens on every interface, trycua/cua#3878)");
  EXPECT_NE(check["fix"].get<std::string>().find("update Lume past 0.5.3"), std::string::npos);
  EXPECT_EQ(run.out.find("vnc://"), std::string::npos) << "the VNC password is never printed";
}

TEST_F(VncWorld, ARecipeThatAsksForVncKeepsTheListenerWithoutAWarning) {
  start_world();
  std::string yaml = util::read_file(recipe).value();
  yaml.replace(yaml.find("vm:\n"), 4, "vm:\n  display: vnc\n");
  ASSERT_TRUE(util::write_file_atomic(recipe, yaml, 0644).ok());
  ASSERT_EQ(create().exit_code, 0);
  CliRun json = cli({"status", "vm1"}, true, {"--json"});
  EXPECT_EQ(json_of(json)["vnc"]["listening"], true) << json.out;
  EXPECT_EQ(doctor_check(doctor(), "vnc")["status"], "ok");
}

} // namespace
} // namespace lume_unlock::test

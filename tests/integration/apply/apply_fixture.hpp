#pragma once
// A guest-sim guest with a (stand-in) shim bundle installed, for enablement apply tests.
#include "apply/enablement_apply.hpp"
#include "apply/shim_installer.hpp"
#include "bundle/bundle.hpp"
#include "enablement/enablement_plan.hpp"
#include "integration/apply/sim_guest.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace lume_unlock::test {

/// A bundle with a linux-x86_64 entry made of stand-in files (the real shim is not needed to
/// test installing and applying): `shim_bytes` as the shim, a shell script as the probe, one
/// support library.
inline bundle::LoadedBundle stand_in_bundle(const std::string& work,
                                            const std::string& shim_bytes,
                                            const std::string& platform = "linux-x86_64") {
  EXPECT_TRUE(util::write_file_atomic(work + "/liblume-unlock-shim.so", shim_bytes, 0755).ok());
  EXPECT_TRUE(
      util::write_file_atomic(work + "/lume-unlock-probe", "#!/bin/sh\necho probe\n", 0755).ok());
  EXPECT_TRUE(util::write_file_atomic(work + "/libMetalEmu.so", "support", 0755).ok());
  bundle::BundleSpec spec{
      "1.2.3",
      "test",
      {{platform,
        platform.rfind("darwin", 0) == 0 ? "DYLD_INSERT_LIBRARIES" : "LD_PRELOAD",
        work + "/liblume-unlock-shim.so",
        work + "/lume-unlock-probe",
        {work + "/libMetalEmu.so"}}}};
  auto built = bundle::build_bundle(spec, work + "/out");
  EXPECT_TRUE(built.ok()) << (built.ok() ? "" : built.error().message());
  auto loaded = bundle::load_bundle_directory(work + "/out/shim-bundle");
  EXPECT_TRUE(loaded.ok()) << (loaded.ok() ? "" : loaded.error().message());
  return loaded.value();
}

class ApplyTest : public SimGuestTest {
protected:
  void SetUp() override {
    SimGuestTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) {
      return;
    }
    bundle_ = stand_in_bundle(work.path(), "not really a shim");
    auto installed = apply::install_shim(*session, *bundle_, facts);
    ASSERT_TRUE(installed.ok()) << installed.error().message();
  }

  /// Observes and applies `list` through `through` (default: the fixture's session).
  Result<apply::ApplyReport> apply(const enablement::EnablementList& list,
                                   guest::GuestSession* through = nullptr) {
    guest::GuestSession& s = through != nullptr ? *through : *session;
    auto view = apply::read_guest_enablement(s, "vm1");
    if (!view.ok()) {
      return view.error();
    }
    return apply::apply_enablement(s, list, view.value().target, view.value().observed);
  }

  apply::GuestEnablementView view() {
    auto read = apply::read_guest_enablement(*session, "vm1");
    EXPECT_TRUE(read.ok()) << (read.ok() ? "" : read.error().message());
    return read.value();
  }

  static enablement::EnablementEntry agent(const std::string& name,
                                           const std::string& program = "/bin/sleep",
                                           std::vector<std::string> args = {"300"}) {
    enablement::EnablementEntry entry;
    entry.name = name;
    entry.program = program;
    entry.args = std::move(args);
    return entry;
  }

  std::string support() const { return facts.home + "/Library/Application Support/LumeUnlock"; }
  std::string plist(const std::string& name) const {
    return facts.home + "/Library/LaunchAgents/dev.lume-unlock." + name + ".plist";
  }
  bool loaded(const std::string& name) {
    auto ran = session->run("launchctl print gui/" + std::to_string(facts.uid) +
                            "/dev.lume-unlock." + name + " >/dev/null 2>&1");
    return ran.ok() && ran.value().exit_status == 0;
  }

  /// What guest-sim's launchd holds for an agent, for a failure message.
  std::string launchd_record(const std::string& name) {
    auto ran = session->run("launchctl print gui/" + std::to_string(facts.uid) +
                            "/dev.lume-unlock." + name + " 2>&1");
    return ran.ok() ? ran.value().stdout_text : ran.error().message();
  }

  TempDir work{"lume-unlock-bundle"};
  std::optional<bundle::LoadedBundle> bundle_;
};

} // namespace lume_unlock::test

#pragma once

// The fixture of lume-sim's tests over raw HTTP (lume_sim_test.cpp, lume_sim_images_test.cpp).
#include "raw_http.hpp"
#include "support/lume_sim.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace lume_sim_test {

using lume_unlock::test::LumeSim;
using nlohmann::json;

class LumeSimTest : public ::testing::Test {
protected:
  std::unique_ptr<LumeSim> start(std::vector<std::string> args = {}) {
    auto sim = std::make_unique<LumeSim>(LUME_SIM_BINARY, std::move(args));
    return sim;
  }

  /// Polls GET /lume/vms/NAME until status is `want` (5 s at most).
  static json await_status(int port, const std::string& name, const std::string& want) {
    json last;
    for (int i = 0; i < 250; ++i) {
      auto r = raw(port, "GET", "/lume/vms/" + name);
      if (r.status == 200) {
        last = r.json_body();
        if (last["status"] == want) {
          return last;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "VM '" << name << "' never became " << want << "; last " << last.dump();
    return last;
  }
};

} // namespace lume_sim_test

#define START_SIM(var, ...)                                                                        \
  auto var = start(__VA_ARGS__);                                                                   \
  LUME_UNLOCK_REQUIRE(var->started(), var->failure())

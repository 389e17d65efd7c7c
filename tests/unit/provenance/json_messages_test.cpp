// Issue 44: one error format for a bad document, whichever reader reads it. The same mistake (a
// number where a string belongs) fed to three readers gives three messages of one shape.
#include "bundle/bundle.hpp"
#include "lume/types.hpp"
#include "provenance/provenance.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lume_unlock {
namespace {

using nlohmann::json;

TEST(JsonMessages, TheSameWrongTypeReadsTheSameInEveryDocument) {
  json vm = {{"name", "dev"},
             {"os", "macOS"},
             {"cpuCount", 4},
             {"memorySize", 1},
             {"diskSize", {{"allocated", 1}, {"total", 7}}},
             {"display", "1024x768"},
             {"status", "stopped"},
             {"locationName", "home"},
             {"networkMode", "nat"}};
  vm["os"] = 7;
  const auto lume = lume::vm_list_from_json(json::array({vm}));

  const json record = {{"schema", provenance::k_schema},
                       {"vm", "dev"},
                       {"shim", {{"files", {{{"path", "/x"}, {"sha256", 7}}}}}}};
  const auto provenance = provenance::provenance_from_json(record);

  const std::string hex(64, 'a');
  const json manifest = {{"schema", bundle::k_bundle_schema},
                         {"version", "1"},
                         {"source_revision", "x"},
                         {"platforms",
                          {{"linux-x86_64",
                            {{"inject_env", "LD_PRELOAD"},
                             {"shim", {{"path", "a.so"}, {"sha256", 7}}},
                             {"probe", {{"path", "p"}, {"sha256", hex}}}}}}}};
  const auto bundle = bundle::parse_bundle_manifest(manifest.dump());

  ASSERT_FALSE(lume.ok());
  ASSERT_FALSE(provenance.ok());
  ASSERT_FALSE(bundle.ok());
  EXPECT_EQ(lume.error().why(), "/0/os: expected a string, got an integer");
  EXPECT_EQ(provenance.error().why(), "/shim/files/0/sha256: expected a string, got an integer");
  EXPECT_EQ(bundle.error().why(),
            "/platforms/linux-x86_64/shim/sha256: expected a string, got an integer");
  // One shape: "<RFC 6901 pointer>: expected <type>, got <type>", after the document's name.
  const std::string shape = "^(/[A-Za-z0-9_-]+)+: expected a string, got an integer$";
  for (const Error* error : {&lume.error(), &provenance.error(), &bundle.error()}) {
    EXPECT_THAT(error->why(), testing::MatchesRegex(shape));
    EXPECT_EQ(error->message(),
              (error->what_failed().empty() ? "" : error->what_failed() + ": ") + error->why());
  }
  EXPECT_EQ(provenance.error().message(),
            "invalid provenance record: /shim/files/0/sha256: expected a string, got an integer");
  EXPECT_EQ(bundle.error().message(),
            "invalid bundle.json: /platforms/linux-x86_64/shim/sha256: expected a string, got an "
            "integer");
}

} // namespace
} // namespace lume_unlock

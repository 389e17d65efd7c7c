// The one error for an entry the enablement list lacks (allow remove, bench and exec say it with
// pipeline::unknown_entry): "did you mean" the closest name, with the flag to give it when there
// is one, else the caller's hint.
#include "pipeline/allow.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::pipeline {
namespace {

TEST(UnknownEntry, NamesTheClosestEntryElseSaysHowToEnableIt) {
  enablement::EnablementList list;
  for (const char* name : {"llama-bench", "show-env"}) {
    list.entries.emplace_back().name = name;
  }

  const Error bench = unknown_entry(list,
                                    "llama-bnech",
                                    "bench of VM 'vm1'",
                                    "entry 'llama-bnech' is not on its enablement list",
                                    enable_first("llama-bench", "vm1", "llama-bnech"),
                                    "--entry");
  EXPECT_EQ(bench.category(), ErrorCategory::usage);
  EXPECT_EQ(bench.message(),
            "bench of VM 'vm1': entry 'llama-bnech' is not on its enablement list");
  EXPECT_EQ(bench.hint(), "did you mean 'llama-bench'? (--entry NAME)");

  const Error allow = unknown_entry(
      list, "shwo-env", "allow remove", "entry 'shwo-env' is not on the list", "see the list");
  EXPECT_EQ(allow.hint(), "did you mean 'show-env'?");

  const Error far = unknown_entry(list,
                                  "perplexity",
                                  "bench of VM 'vm1'",
                                  "entry 'perplexity' is not on its enablement list",
                                  enable_first("llama-perplexity", "vm1", "perplexity"),
                                  "--perplexity-entry");
  EXPECT_EQ(far.hint(),
            "enable llama-perplexity first: 'lume-unlock allow add vm1 perplexity --no-agent "
            "--program PATH'");
}

} // namespace
} // namespace lume_unlock::pipeline

#include "guest/shell_quote.hpp"
#include "guest/ssh_internal.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::guest {
namespace {

TEST(StreamTransfer, TheReceivingCommandQuotesThePathAndStoresOrHashesWhatArrives) {
  const std::string quoted = shell_quote("/Users/lume/a dir/it's $(x).gguf").value();
  EXPECT_EQ(stream_receive_command(quoted, false), "umask 077 && cat > " + quoted);
  EXPECT_EQ(stream_receive_command(quoted, true),
            "umask 077 && { tee -- " + quoted +
                " || echo lume-unlock-stream-store-failed >&2; } | shasum -a 256");
}

TEST(StreamTransfer, OnlyOneShasumLineOfStandardInputIsADigest) {
  const std::string hex = "9fecc3b3cd76bba89d504f29b616eedf7da85b96540e490ca5824d3f7d2776a0";
  EXPECT_EQ(guest_digest_from(hex + "  -\n"), hex);
  EXPECT_EQ(guest_digest_from(hex + "  -"), hex);
  EXPECT_EQ(guest_digest_from(""), "");
  EXPECT_EQ(guest_digest_from(hex + "  /tmp/f\n"), "") << "a file, not standard input";
  EXPECT_EQ(guest_digest_from(hex.substr(1) + "  -\n"), "");
  EXPECT_EQ(
      guest_digest_from("9FECC3B3CD76BBA89D504F29B616EEDF7DA85B96540E490CA5824D3F7D2776A0  -"), "");
  EXPECT_EQ(guest_digest_from("shasum: -: broken pipe\n" + hex + "  -\n"), "");
}

} // namespace
} // namespace lume_unlock::guest

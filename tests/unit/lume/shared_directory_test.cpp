// Where a macOS guest sees the directories a run request shares (docs/sources.md, "Lume's
// shared directories": VMVirtualizationService.swift createDirectoryShare @ b296ec9c).
#include "lume/client.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::lume {
namespace {

TEST(SharedDirectory, EachEntryIsNamedByTheLastComponentOfItsHostPath) {
  EXPECT_EQ(share_entry_names({{"/Users/me/Library/Caches/lume-unlock/blobs/sha256", true}}),
            std::vector<std::string>{"sha256"});
  EXPECT_EQ(share_entry_names({{"/Users/me/work/", false}}), std::vector<std::string>{"work"})
      << "a trailing slash is not a component";
  EXPECT_EQ(share_entry_names({{"/", false}}), std::vector<std::string>{"/"})
      << "Foundation's lastPathComponent of the root is '/': Lume keeps it";
  EXPECT_EQ(share_entry_names({{"", false}}), std::vector<std::string>{"Shared Folder"});
}

TEST(SharedDirectory, TakenNamesGetANumberInRequestOrderAndThePlaceholderIsTaken) {
  EXPECT_EQ(
      share_entry_names({{"/a/models", true},
                         {"/b/models", false},
                         {"/c/models", false},
                         {"/d/.lume-live-share", true}}),
      (std::vector<std::string>{"models", "models (2)", "models (3)", ".lume-live-share (2)"}));
}

TEST(SharedDirectory, TheGuestPathOfAFileInAShare) {
  const std::vector<SharedDirectory> shared = {{"/x/sha256", true}, {"/y/sha256", true}};
  EXPECT_EQ(guest_path_in_share(k_macos_share_root, shared, 0, "ab12"),
            "/Volumes/My Shared Files/sha256/ab12");
  EXPECT_EQ(guest_path_in_share(k_macos_share_root, shared, 1, "ab12"),
            "/Volumes/My Shared Files/sha256 (2)/ab12");
  EXPECT_EQ(guest_path_in_share("/g/Volumes/My Shared Files", shared, 0, ""),
            "/g/Volumes/My Shared Files/sha256");
}

} // namespace
} // namespace lume_unlock::lume

// The darwin-arm64 entry of the built shim bundle, read by the loader and by lume-unlock's own
// Mach-O reader: bundle.json lists the slices each file really has. The cross-built shim has no
// arm64e slice (ld64.lld cannot link one); Apple's toolchain builds a universal arm64 + arm64e one.
#include "bundle/bundle.hpp"
#include "macho/macho.hpp"
#include "support/file_io.hpp"

#include <gtest/gtest.h>

namespace lume_unlock {
namespace {

TEST(ShimDarwinBundle, BundleJsonListsTheSlicesTheMachOFilesHave) {
  auto loaded = bundle::load_bundle_directory(LUME_UNLOCK_SHIM_BUNDLE_DIR);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  const auto& entry = loaded.value().manifest().platforms.at("darwin-arm64");
  ASSERT_TRUE(entry.probe);
  for (const bundle::BundleFile* file : {&entry.shim, &*entry.probe}) {
    SCOPED_TRACE(file->path);
    const std::string bytes = test::slurp(loaded.value().root() + "/" + file->path);
    auto image = macho::read_program_image(macho::read_from_bytes(bytes));
    ASSERT_TRUE(image.ok()) << image.error().message();
    std::vector<std::string> archs;
    for (const macho::Slice& slice : image.value().slices) {
      archs.push_back(slice.arch());
      ASSERT_TRUE(slice.signature) << "arm64 macOS runs nothing unsigned";
      EXPECT_TRUE(slice.signature->ad_hoc());
    }
    EXPECT_EQ(file->slices, archs);
  }
#ifdef __APPLE__
  EXPECT_EQ(entry.shim.slices, (std::vector<std::string>{"arm64", "arm64e"}));
#else
  EXPECT_EQ(entry.shim.slices, std::vector<std::string>{"arm64"});
#endif
  EXPECT_EQ(entry.probe->slices, std::vector<std::string>{"arm64"});
  // The probe is a program like any other: the reader lets the shim into it.
  const std::string probe = test::slurp(loaded.value().root() + "/" + entry.probe->path);
  const auto verdict =
      macho::judge_program(macho::read_program_image(macho::read_from_bytes(probe)).value(),
                           macho::ShimTarget{"darwin-arm64", {"arm64"}, true});
  EXPECT_EQ(verdict.kind, macho::VerdictKind::injectable) << verdict.why;
}

} // namespace
} // namespace lume_unlock

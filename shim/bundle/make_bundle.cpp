// lume-unlock-make-bundle: assembles the shim bundle (DESIGN §4.4) from files the build made
// (usage: k_usage). --inject-env, --shim, --probe and --support describe the platform named by the
// --platform before them. Writes DIR/shim-bundle/ and DIR/lume-unlock-shim-bundle-<version>.tar.gz.
// For a darwin platform it reads the Mach-O slices of the shim and the probe (provisioner/macho)
// and lists them in bundle.json; a darwin file that is not a Mach-O is refused.
#include "bundle/bundle.hpp"
#include "macho/macho.hpp"
#include "util/atomic_file.hpp"
#include "util/text.hpp"

#include <iostream>
#include <string>
#include <vector>

namespace {

using lume_unlock::Error;
using lume_unlock::ErrorCategory;
using lume_unlock::bundle::BundleSpec;

constexpr const char* k_usage =
    "usage: lume-unlock-make-bundle --out DIR --version V [--source-revision R]\n"
    "           --platform NAME --inject-env VAR --shim FILE [--probe FILE] [--support FILE]...\n"
    "           [--platform NAME ...]\n";

struct Arguments {
  std::string out;
  BundleSpec spec;
};

Error usage(const std::string& why) {
  return Error(ErrorCategory::usage, "bad usage", why);
}

/// Reads the command line; platform options attach to the latest --platform.
Arguments parse(const std::vector<std::string>& args) {
  Arguments parsed;
  parsed.spec.source_revision = "unknown";
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& option = args[i];
    if (i + 1 >= args.size()) {
      throw usage("'" + option + "' needs a value");
    }
    const std::string& value = args[++i];
    auto current = [&]() -> lume_unlock::bundle::PlatformSources& {
      if (parsed.spec.platforms.empty()) {
        throw usage("'" + option + "' must follow a --platform");
      }
      return parsed.spec.platforms.back();
    };
    if (option == "--out") {
      parsed.out = value;
    } else if (option == "--version") {
      parsed.spec.version = value;
    } else if (option == "--source-revision") {
      parsed.spec.source_revision = value;
    } else if (option == "--platform") {
      parsed.spec.platforms.push_back({value, {}, {}, {}, {}});
    } else if (option == "--inject-env") {
      current().inject_env = value;
    } else if (option == "--shim") {
      current().shim = value;
    } else if (option == "--probe") {
      current().probe = value;
    } else if (option == "--support") {
      current().support.push_back(value);
    } else {
      throw usage("unknown option '" + option + "'");
    }
  }
  if (parsed.out.empty()) {
    throw usage("--out is required");
  }
  if (parsed.spec.version.empty()) {
    throw usage("--version is required");
  }
  return parsed;
}

/// The slices of the Mach-O file at `path` ("arm64"), or an error naming it.
std::vector<std::string> slices_of(const std::string& platform, const std::string& path) {
  const std::string bytes = lume_unlock::util::read_file(path).value_or_throw();
  auto image = lume_unlock::macho::read_program_image(lume_unlock::macho::read_from_bytes(bytes))
                   .value_or_throw();
  if (!image.is_macho()) {
    throw Error(ErrorCategory::usage,
                "platform '" + platform + "': '" + path + "'",
                "is " + image.other + ", not a Mach-O");
  }
  std::vector<std::string> slices;
  for (const auto& slice : image.slices) {
    slices.push_back(slice.arch());
  }
  return slices;
}

/// Lists the slices of every darwin platform's shim and probe.
void read_darwin_slices(BundleSpec& spec) {
  for (auto& platform : spec.platforms) {
    if (!lume_unlock::util::starts_with(platform.name, "darwin-")) {
      continue;
    }
    platform.shim_slices = slices_of(platform.name, platform.shim);
    if (platform.probe) {
      platform.probe_slices = slices_of(platform.name, *platform.probe);
    }
  }
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << k_usage;
    return 0;
  }
  try {
    auto parsed = parse(args);
    read_darwin_slices(parsed.spec);
    auto built = lume_unlock::bundle::build_bundle(parsed.spec, parsed.out).value_or_throw();
    std::cout << "wrote " << built.directory << " and " << built.archive << " ("
              << lume_unlock::util::join(built.manifest.platforms,
                                         ", ",
                                         [](const auto& platform) { return platform.first; })
              << ")\n";
    return 0;
  } catch (const Error& error) {
    std::cerr << "lume-unlock-make-bundle: error: " << error.message() << '\n';
    if (error.category() == ErrorCategory::usage) {
      std::cerr << k_usage;
    }
    return lume_unlock::exit_code(error.category());
  }
}

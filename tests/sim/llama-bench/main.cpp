// llama-bench stand-in for guest-sim: as far as lume-unlock sees it, it behaves like llama.cpp's
// llama-bench on a macOS guest. It opens the Metal device (libMetalEmu, through the probe's own
// query path in shim/probe/device_query.c), prints the ggml_metal init lines llama.cpp derives
// from the device's answers on stderr, and prints on stdout the replayed `-o json` results that
// match what the device let llama.cpp do: the unlocked figures when SIMD-group reduction and
// matrix multiply are on (Apple7 answered true, as only the active shim makes the paravirtual
// device say), the stock figures otherwise. Nothing but the device decides: no argument or
// environment variable selects the figures, so a broken injection yields the stock figures.
// Like llama-bench, it prints the capability block whatever the flags (the Metal backend registers
// before llama-bench silences ggml), and ggml's later messages only with -v (without it
// llama-bench hands ggml a null logger). See tests/sim/README.md.
#include "probe/device_query.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

struct Arguments {
  std::string model;
  long prompt = 512;
  long gen = 128;
  std::string output = "md";
  bool verbose = false; ///< -v, --verbose: a flag without a value
};

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::exit(1);
}

long number(const char* text, const char* flag) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0) {
    fail(std::string("invalid number for ") + flag + ": " + text);
  }
  return value;
}

Arguments parse(int argc, char** argv) {
  Arguments out;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-v" || flag == "--verbose") {
      out.verbose = true;
      continue;
    }
    if (i + 1 >= argc) {
      fail("missing value for " + flag);
    }
    const char* value = argv[++i];
    if (flag == "-m" || flag == "--model") {
      out.model = value;
    } else if (flag == "-p" || flag == "--n-prompt") {
      out.prompt = number(value, "-p");
    } else if (flag == "-n" || flag == "--n-gen") {
      out.gen = number(value, "-n");
    } else if (flag == "-r" || flag == "--repetitions") {
      (void)number(value, "-r"); // replayed figures: the repetitions were made when recorded
    } else if (flag == "-t" || flag == "--threads") {
      (void)number(value, "-t"); // as -r: the figures were recorded with the published -t 8
    } else if (flag == "-ngl" || flag == "--n-gpu-layers") {
      // llama-bench reads -1 as every layer (the published run's -ngl -1).
      (void)number(std::string(value) == "-1" ? "0" : value, "-ngl");
    } else if (flag == "-o" || flag == "--output") {
      out.output = value;
    } else {
      fail("unknown argument: " + flag);
    }
  }
  return out;
}

/// The directory this executable is in (the replay files and libMetalEmu.so live beside it).
std::string own_directory() {
  char path[4096];
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) {
    fail("cannot find my own path");
  }
  std::string text(path, static_cast<std::size_t>(length));
  return text.substr(0, text.find_last_of('/'));
}

/// The highest family in [first, last] the device answers true for, 0 for none.
long highest(void* device, long first, long last) {
  long best = 0;
  for (long family = first; family <= last; ++family) {
    if (lume_unlock_probe_supports_family(device, family) != 0) {
      best = family;
    }
  }
  return best;
}

const char* truth(bool value) {
  return value ? "true" : "false";
}

/// Prints on stderr the ggml_metal lines llama.cpp prints for this device; returns whether
/// SIMD-group reduction and matrix multiply are on (the unlocked figures).
bool print_device_lines(void* device, const lume_unlock_probe_device& info, bool verbose) {
  // What llama.cpp's ggml-metal derives from supportsFamily: (metal-capabilities.md §4.2).
  const long apple = highest(device, 1001, 1030);
  const long common = highest(device, 3001, 3010);
  const long metal = highest(device, 5001, 5010);
  const bool apple7 = apple >= 1007;
  const bool metal3 = metal >= 5001;
  const bool reduction = apple7 || metal3;
  const bool matrix = apple7;
  const bool bfloat = metal3 || apple >= 1006;
  std::fprintf(stderr, "ggml_metal_library_init: using embedded metal library\n");
  std::fprintf(stderr, "ggml_metal_device_init: GPU name:   MTL0 (%s)\n", info.name);
  if (apple != 0) {
    std::fprintf(stderr,
                 "ggml_metal_device_init: GPU family: MTLGPUFamilyApple%ld  (%ld)\n",
                 apple - 1000,
                 apple);
  }
  if (common != 0) {
    std::fprintf(stderr,
                 "ggml_metal_device_init: GPU family: MTLGPUFamilyCommon%ld (%ld)\n",
                 common - 3000,
                 common);
  }
  if (metal != 0) {
    std::fprintf(stderr,
                 "ggml_metal_device_init: GPU family: MTLGPUFamilyMetal%ld  (%ld)\n",
                 metal - 5000 + 2,
                 metal);
  }
  std::fprintf(stderr, "ggml_metal_device_init: simdgroup reduction   = %s\n", truth(reduction));
  std::fprintf(stderr, "ggml_metal_device_init: simdgroup matrix mul. = %s\n", truth(matrix));
  std::fprintf(stderr, "ggml_metal_device_init: has unified memory    = true\n");
  std::fprintf(stderr, "ggml_metal_device_init: has bfloat            = %s\n", truth(bfloat));
  std::fprintf(stderr, "ggml_metal_device_init: has tensor            = false\n");
  std::fprintf(stderr, "ggml_metal_device_init: use residency sets    = true\n");
  std::fprintf(stderr, "ggml_metal_device_init: use shared buffers    = true\n");
  if (verbose) {
    // What ggml-metal's context says when llama-bench makes it (ggml-metal-context.m,
    // ggml_metal_init): reaches stderr only through llama-bench's -v.
    std::fprintf(stderr, "ggml_metal_init: allocating\n");
    std::fprintf(stderr, "ggml_metal_init: picking default device: %s\n", info.name);
    std::fprintf(stderr, "ggml_metal_init: use fusion         = true\n");
    std::fprintf(stderr, "ggml_metal_init: use concurrency    = true\n");
    std::fprintf(stderr, "ggml_metal_init: use graph optimize = true\n");
  }
  return reduction && matrix;
}

/// The recorded `-o json` tests matching -p and -n, from the unlocked or the stock replay file.
nlohmann::ordered_json replayed(const Arguments& args, bool unlocked) {
  const std::string replay =
      own_directory() + "/llama-bench-replay/" + (unlocked ? "unlocked" : "stock") + ".json";
  std::ifstream in(replay);
  if (!in) {
    fail("no replay file " + replay);
  }
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::ordered_json recorded = nlohmann::ordered_json::parse(text.str(), nullptr, false);
  if (!recorded.is_array()) {
    fail(replay + " is not a llama-bench JSON array");
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& test : recorded) {
    const long prompt = test.value("n_prompt", -1L);
    const long gen = test.value("n_gen", -1L);
    if ((prompt == args.prompt && gen == 0) || (prompt == 0 && gen == args.gen)) {
      out.push_back(test);
    }
  }
  if (out.empty()) {
    fail(replay + " has no pp" + std::to_string(args.prompt) + " or tg" + std::to_string(args.gen) +
         " test to replay");
  }
  return out;
}

} // namespace

int main(int argc, char** argv) {
  const Arguments args = parse(argc, argv);
  if (args.output != "json") {
    fail("this stand-in prints only '-o json' (got '-o " + args.output + "')");
  }
  if (args.model.empty() || ::access(args.model.c_str(), R_OK) != 0) {
    fail("failed to load model '" + args.model + "'");
  }

  lume_unlock_probe_device info;
  void* device = lume_unlock_probe_open_device(0, &info);
  if (device == nullptr) {
    fail("ggml_metal_device_init: no Metal device");
  }
  const bool unlocked = print_device_lines(device, info, args.verbose);
  std::cout << replayed(args, unlocked).dump(2) << std::endl;
  return 0;
}

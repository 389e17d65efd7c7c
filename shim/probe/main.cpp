// lume-unlock-probe [--json] [--from-list]: every capability answer of the Metal device, as this
// process sees it (DESIGN §4.5). Exit 0 when a device was found, 1 when none, 2 on bad usage.
#include "probe/device_query.h"
#include "probe/report.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

namespace {

std::string base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

const lume_unlock_shim_state_v1* find_shim_state() {
  void* symbol = dlsym(RTLD_DEFAULT, "lume_unlock_shim_state");
  if (symbol == nullptr)
    return nullptr;
  return reinterpret_cast<lume_unlock_shim_state_fn>(symbol)();
}

} // namespace

int main(int argc, char** argv) {
  bool json = false;
  bool from_list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "--from-list") {
      from_list = true;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << "usage: lume-unlock-probe [--json] [--from-list]\n"
                   "Prints the Metal device's capability answers as this process sees them.\n"
                   "  --json       one JSON document\n"
                   "  --from-list  query the first device of MTLCopyAllDevices()\n";
      return 0;
    } else {
      std::cerr << "lume-unlock-probe: unknown option \"" << arg << "\"\n"
                << "hint: run lume-unlock-probe --help\n";
      return 2;
    }
  }

  namespace probe = lume_unlock::probe;
  probe::Report report;
  report.process = base_name(argc > 0 ? argv[0] : "lume-unlock-probe");
  report.arch = probe::build_arch();
  lume_unlock_probe_device facts;
  void* device = lume_unlock_probe_open_device(from_list ? 1 : 0, &facts);
  // Read after the device exists: the shim turns inert when it cannot hook the device's class.
  report.shim = probe::shim_status_from(find_shim_state());
  if (device != nullptr) {
    report.device = facts.name;
    for (long code : probe::probe_family_codes()) {
      report.families.push_back({code, lume_unlock_probe_supports_family(device, code) != 0});
    }
    report.max_threadgroup_memory = facts.max_threadgroup_memory;
    report.recommended_max_working_set_size = facts.recommended_max_working_set_size;
  }
  std::cout << (json ? probe::render_json(report) : probe::render_text(report));
  if (device == nullptr) {
    std::cerr << "lume-unlock-probe: no Metal device found\n";
    return 1;
  }
  return 0;
}

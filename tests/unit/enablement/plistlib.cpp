#include "plistlib.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace lume_unlock::enablement::testing {

PlistParse parse_with_plistlib(const std::string& bytes) {
  PlistParse result;
  const char* python = "/usr/bin/python3";
  if (access(python, X_OK) != 0) {
    return result;
  }
  result.python_available = true;
  char path[] = "/tmp/lume-unlock-plist-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) {
    result.error = "mkstemp failed";
    return result;
  }
  close(fd);
  {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
  }
  const std::string command =
      std::string(python) +
      " -c 'import plistlib,sys,json; d=plistlib.load(open(sys.argv[1],\"rb\")); "
      "sys.stdout.write(json.dumps(d, ensure_ascii=True, sort_keys=True))' " +
      path + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  if (pipe != nullptr) {
    char buffer[4096];
    std::size_t n = 0;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) {
      output.append(buffer, n);
    }
    const int status = pclose(pipe);
    result.ok = status == 0;
  }
  std::remove(path);
  if (!result.ok) {
    result.error = output;
    return result;
  }
  result.value = nlohmann::json::parse(output);
  return result;
}

} // namespace lume_unlock::enablement::testing

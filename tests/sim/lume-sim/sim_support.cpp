#include "sim_support.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace lume_sim {

namespace fs = std::filesystem;
using nlohmann::json;

Reply json_reply(int status, const json& j) {
  Reply r;
  r.status = status;
  r.body = Simulator::encode(j);
  return r;
}

Reply message(int status, const std::string& text) {
  return json_reply(status, {{"message", text}});
}

std::optional<std::string> normalized_network(const std::string& n) {
  std::string lower = n;
  for (char& c : lower) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (lower == "nat" || lower == "bridged") {
    return lower;
  }
  if (lower.rfind("bridged:", 0) == 0 && n.size() > 8) {
    return "bridged:" + n.substr(8);
  }
  return std::nullopt;
}

std::string normalized_name(std::string name) {
  if (std::count(name.begin(), name.end(), ':') == 1) {
    std::replace(name.begin(), name.end(), ':', '_');
  }
  return name;
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() + 0 &&
        std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::optional<json> read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) {
    return std::nullopt;
  }
  std::stringstream s;
  s << in.rdbuf();
  json j = json::parse(s.str(), nullptr, false);
  if (j.is_discarded()) {
    return std::nullopt;
  }
  return j;
}

void write_json(const fs::path& path, const json& j, bool pretty) {
  const fs::path temp = path.string() + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << (pretty ? j.dump(2) : j.dump());
  }
  fs::rename(temp, path);
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void copy_sparse(const fs::path& from, const fs::path& to) {
  int in = open(from.c_str(), O_RDONLY | O_CLOEXEC);
  int out = open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (in < 0 || out < 0) {
    if (in >= 0)
      close(in);
    if (out >= 0)
      close(out);
    throw std::runtime_error("cannot copy " + from.string());
  }
  struct stat st {};
  fstat(in, &st);
  std::vector<char> buffer(1 << 16);
  off_t data = 0;
  while ((data = lseek(in, data, SEEK_DATA)) >= 0) {
    off_t hole = lseek(in, data, SEEK_HOLE);
    for (off_t at = data; at < hole;) {
      ssize_t n = pread(
          in, buffer.data(), std::min<off_t>(hole - at, static_cast<off_t>(buffer.size())), at);
      if (n <= 0 || pwrite(out, buffer.data(), static_cast<std::size_t>(n), at) != n) {
        break;
      }
      at += n;
    }
    data = hole;
  }
  (void)!ftruncate(out, st.st_size);
  close(in);
  close(out);
}

bool is_vm_dir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "config.json", ec)) {
    return false;
  }
  return (fs::exists(dir / "disk.img", ec) && fs::exists(dir / "nvram.bin", ec)) ||
         fs::exists(dir / ".provisioning", ec);
}

} // namespace lume_sim

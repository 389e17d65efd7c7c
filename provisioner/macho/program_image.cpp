#include "macho/macho.hpp"
#include "util/text.hpp"

#include <cstdio>

namespace lume_unlock::macho {

std::string arch_name(std::uint32_t cputype, std::uint32_t cpusubtype) {
  const std::uint32_t subtype = cpusubtype & ~k_cpu_subtype_capability_mask;
  switch (cputype) {
  case k_cpu_type_arm64:
    return subtype == k_cpu_subtype_arm64e ? "arm64e" : "arm64";
  case k_cpu_type_x86_64:
    return subtype == k_cpu_subtype_x86_64_h ? "x86_64h" : "x86_64";
  case k_cpu_type_x86:
    return "i386";
  case k_cpu_type_arm:
    return "arm";
  default:
    break;
  }
  char text[48];
  std::snprintf(text, sizeof text, "cputype 0x%x/cpusubtype 0x%x", cputype, cpusubtype);
  return text;
}

namespace {

constexpr std::uint32_t k_fat_magic = 0xcafebabe;
constexpr std::uint32_t k_fat_magic_64 = 0xcafebabf;
constexpr std::uint32_t k_mh_magic = 0xfeedface;
constexpr std::uint32_t k_mh_magic_64 = 0xfeedfacf;
constexpr std::uint32_t k_mh_cigam = 0xcefaedfe;
constexpr std::uint32_t k_mh_cigam_64 = 0xcffaedfe;
constexpr std::uint32_t k_lc_code_signature = 0x1d;
constexpr std::uint32_t k_lc_version_min_macosx = 0x24;
constexpr std::uint32_t k_lc_build_version = 0x32;
constexpr std::uint32_t k_platform_macos = 1;
constexpr std::size_t k_head = 4096;
const std::string k_what = "reading the Mach-O headers";

bool is_thin_magic(std::uint32_t magic) {
  return magic == k_mh_magic || magic == k_mh_magic_64 || magic == k_mh_cigam ||
         magic == k_mh_cigam_64;
}

/// What the reader keeps of a slice's load commands.
struct ScannedCommands {
  std::optional<std::pair<std::uint32_t, std::uint32_t>> signature; ///< dataoff, datasize
  std::optional<std::uint32_t> min_macos;
};

/// The minimum macOS of LC_BUILD_VERSION (platform, minos at 8 and 12 of a 24-byte command plus
/// its tools) or LC_VERSION_MIN_MACOSX (version at 8 of 16 bytes); nullopt for another platform.
Result<std::optional<std::uint32_t>>
min_macos_of(std::string_view command, std::uint32_t cmd, std::uint32_t cmdsize, bool big) {
  const bool build = cmd == k_lc_build_version;
  if (cmdsize < (build ? 24u : 16u)) {
    return malformed(k_what,
                     std::string(build ? "LC_BUILD_VERSION" : "LC_VERSION_MIN_MACOSX") +
                         " has size " + std::to_string(cmdsize) + ", too small");
  }
  if (build && u32(command, 8, big) != k_platform_macos) {
    return std::optional<std::uint32_t>();
  }
  return std::optional<std::uint32_t>(u32(command, build ? 12 : 8, big));
}

Result<ScannedCommands> scan_commands(const std::string& commands, std::uint32_t ncmds, bool big) {
  ScannedCommands scanned;
  std::size_t at = 0;
  for (std::uint32_t i = 0; i < ncmds; ++i) {
    if (!fits(at, 8, commands.size())) {
      return malformed(k_what, "load command " + std::to_string(i) + " runs past sizeofcmds");
    }
    const std::uint32_t cmd = u32(commands, at, big);
    const std::uint32_t cmdsize = u32(commands, at + 4, big);
    if (cmdsize < 8 || !fits(at, cmdsize, commands.size())) {
      return malformed(k_what,
                       "load command " + std::to_string(i) + " has size " +
                           std::to_string(cmdsize) + ", which does not fit");
    }
    if (cmd == k_lc_code_signature) {
      if (cmdsize != 16) {
        return malformed(k_what,
                         "LC_CODE_SIGNATURE has size " + std::to_string(cmdsize) + ", not 16");
      }
      if (scanned.signature) {
        return malformed(k_what, "the slice has two LC_CODE_SIGNATURE commands");
      }
      scanned.signature.emplace(u32(commands, at + 8, big), u32(commands, at + 12, big));
    }
    if (cmd == k_lc_build_version || cmd == k_lc_version_min_macosx) {
      LUME_UNLOCK_TRY_ASSIGN(
          auto min_macos,
          min_macos_of(std::string_view(commands).substr(at, cmdsize), cmd, cmdsize, big));
      if (min_macos && !scanned.min_macos) {
        scanned.min_macos = min_macos;
      }
    }
    at += cmdsize;
  }
  return scanned;
}

/// The slice at `offset` of at most `size` bytes (UINT64_MAX when unknown: a thin file).
Result<Slice> read_slice(const ReadAt& source, std::uint64_t offset, std::uint64_t size) {
  LUME_UNLOCK_TRY_ASSIGN(auto header, read_exact(source, offset, 28, k_what));
  // The magic read big-endian: 0xfeedfac? for a big-endian file, 0xcefaedfe/0xcffaedfe for a
  // little-endian one (every Apple-silicon and Intel program).
  const std::uint32_t magic = u32(header, 0, true);
  if (!is_thin_magic(magic)) {
    return malformed(k_what,
                     "the slice at offset " + std::to_string(offset) +
                         " does not start with a Mach-O magic");
  }
  const bool big = magic == k_mh_magic || magic == k_mh_magic_64;
  const bool is64 = magic == k_mh_magic_64 || magic == k_mh_cigam_64;
  const std::uint64_t header_size = is64 ? 32 : 28;
  Slice slice;
  slice.offset = offset;
  slice.cputype = u32(header, 4, big);
  slice.cpusubtype = u32(header, 8, big);
  slice.filetype = u32(header, 12, big);
  const std::uint32_t ncmds = u32(header, 16, big);
  const std::uint32_t sizeofcmds = u32(header, 20, big);
  if (sizeofcmds > k_max_load_commands_size || !fits(header_size, sizeofcmds, size)) {
    return malformed(k_what,
                     "the load commands (" + std::to_string(sizeofcmds) +
                         " bytes) do not fit the slice");
  }
  if (ncmds > sizeofcmds / 8) {
    return malformed(k_what,
                     std::to_string(ncmds) + " load commands cannot fit in " +
                         std::to_string(sizeofcmds) + " bytes");
  }
  LUME_UNLOCK_TRY_ASSIGN(auto commands,
                         read_exact(source, offset + header_size, sizeofcmds, k_what));
  LUME_UNLOCK_TRY_ASSIGN(auto scanned, scan_commands(commands, ncmds, big));
  slice.min_macos = scanned.min_macos;
  const auto& signature = scanned.signature;
  if (signature) {
    const auto [dataoff, datasize] = *signature;
    if (!fits(dataoff, datasize, size)) {
      return malformed(k_what,
                       "the code signature (" + std::to_string(datasize) + " bytes at offset " +
                           std::to_string(dataoff) + ") lies outside the slice");
    }
    LUME_UNLOCK_TRY_ASSIGN(auto read, read_code_signature(source, offset + dataoff, datasize));
    slice.signature = read;
  }
  return slice;
}

Result<ProgramImage> read_fat(const ReadAt& source, std::string_view head) {
  const bool is64 = u32(head, 0, true) == k_fat_magic_64;
  const std::uint32_t count = u32(head, 4, true);
  const std::size_t entry = is64 ? 32 : 20;
  if (count == 0 || count > k_max_fat_slices) {
    return malformed(k_what, "the fat header claims " + std::to_string(count) + " slices");
  }
  if (head.size() < 8 + entry * count) {
    return malformed(k_what, "the file is truncated inside its fat header");
  }
  ProgramImage image;
  image.fat = true;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::size_t at = 8 + entry * i;
    const std::uint32_t cputype = u32(head, at, true);
    const std::uint32_t cpusubtype = u32(head, at + 4, true);
    const std::uint64_t offset = is64 ? u64(head, at + 8, true) : u32(head, at + 8, true);
    const std::uint64_t size = is64 ? u64(head, at + 16, true) : u32(head, at + 12, true);
    if (offset < 8 + entry * count || !fits(offset, size, UINT64_MAX)) {
      return malformed(k_what,
                       "fat slice " + std::to_string(i) + " (offset " + std::to_string(offset) +
                           ", size " + std::to_string(size) +
                           ") overlaps the fat header or overflows");
    }
    LUME_UNLOCK_TRY_ASSIGN(auto slice, read_slice(source, offset, size));
    if (slice.cputype != cputype || slice.cpusubtype != cpusubtype) {
      return malformed(k_what,
                       "fat slice " + std::to_string(i) + " is " + arch_name(cputype, cpusubtype) +
                           " in the fat header but " + slice.arch() + " in its own header");
    }
    image.slices.push_back(slice);
  }
  return image;
}

std::string describe_other(std::string_view head) {
  if (head.empty()) {
    return "an empty file";
  }
  if (head.substr(0, 2) == "#!") {
    return "a script (#!)";
  }
  if (head.substr(0, 4) == "\x7f"
                           "ELF") {
    return "an ELF file";
  }
  if (head.size() >= 4 && u32(head, 0, true) == k_fat_magic) {
    return "a Java class file";
  }
  return "a file of another kind";
}

} // namespace

std::string Slice::arch() const {
  return arch_name(cputype, cpusubtype);
}

std::string ProgramImage::archs() const {
  return util::join(slices, " ", [](const Slice& slice) { return slice.arch(); });
}

const Slice* ProgramImage::find(const std::string& arch) const {
  for (const Slice& slice : slices) {
    if (slice.arch() == arch) {
      return &slice;
    }
  }
  return nullptr;
}

std::string format_version(std::uint32_t packed) {
  const std::uint32_t patch = packed & 0xff;
  return std::to_string(packed >> 16) + "." + std::to_string((packed >> 8) & 0xff) +
         (patch != 0 ? "." + std::to_string(patch) : "");
}

std::optional<std::uint32_t> parse_version(std::string_view text) {
  std::uint32_t packed = 0;
  int parts = 0;
  while (parts < 3) {
    const std::size_t dot = text.find('.');
    const std::string_view part = text.substr(0, dot);
    const std::uint32_t limit = parts == 0 ? 0xffff : 0xff;
    if (part.empty() || part.size() > 5 || part.find_first_not_of("0123456789") != part.npos ||
        std::stoul(std::string(part)) > limit) {
      return std::nullopt;
    }
    packed |= static_cast<std::uint32_t>(std::stoul(std::string(part))) << (16 - 8 * parts);
    ++parts;
    if (dot == std::string_view::npos) {
      return packed;
    }
    text.remove_prefix(dot + 1);
  }
  return std::nullopt;
}

Result<ProgramImage> read_program_image(const ReadAt& source) {
  LUME_UNLOCK_TRY_ASSIGN(auto head, source(0, k_head));
  if (head.size() > k_head) {
    head.resize(k_head);
  }
  const std::uint32_t magic = head.size() >= 8 ? u32(head, 0, true) : 0;
  // 0xcafebabe is also a Java class file's magic; its next word (the class file version) is
  // far above the slice count of any fat file.
  if ((magic == k_fat_magic && u32(head, 4, true) <= k_max_fat_slices) || magic == k_fat_magic_64) {
    return read_fat(source, head);
  }
  if (head.size() >= 4 && is_thin_magic(u32(head, 0, true))) {
    LUME_UNLOCK_TRY_ASSIGN(auto slice, read_slice(source, 0, UINT64_MAX));
    ProgramImage image;
    image.slices.push_back(slice);
    return image;
  }
  ProgramImage image;
  image.other = describe_other(head);
  return image;
}

} // namespace lume_unlock::macho

#include "server/compiler/cubin_info.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace cutune::compiler {
namespace {

// .nv.info attribute encoding (CUDA's ELF notes, as cuobjdump -elf prints them): each entry is
// {uint8 format, uint8 attribute, ...}; format 0x04 (EIFMT_SVAL) is followed by a uint16 size and
// that many bytes, 0x03 (EIFMT_HVAL) by a uint16 value, 0x02 (EIFMT_BVAL) by one byte and a pad,
// 0x01 (EIFMT_NVAL) by a pad.
constexpr uint8_t kFormatNoValue = 0x01, kFormatByte = 0x02, kFormatHalf = 0x03,
                  kFormatSized = 0x04;
constexpr uint8_t kRegCount = 0x2f, kFrameSize = 0x11;
constexpr uint32_t kSymtab = 2;

template <typename T>
bool Read(std::string_view data, uint64_t offset, T& out) {
  if (offset > data.size() || data.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, data.data() + offset, sizeof(T));
  return true;
}

struct Section {
  uint32_t name = 0, type = 0, link = 0;
  uint64_t offset = 0, size = 0;
};

std::string CString(std::string_view data, uint64_t offset) {
  if (offset >= data.size()) return "";
  const char* start = data.data() + offset;
  return std::string(start, strnlen(start, data.size() - offset));
}

}  // namespace

absl::StatusOr<std::map<std::string, ResourceUsage>> ReadCubinResources(std::string_view cubin) {
  auto bad = [](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("not a readable cubin: ", std::string(why)));
  };
  if (cubin.size() < 64 || cubin.substr(0, 4) != "\x7f" "ELF" || cubin[4] != 2 || cubin[5] != 1) {
    return bad("no 64-bit little-endian ELF header");
  }
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (!Read(cubin, 0x28, shoff) || !Read(cubin, 0x3A, shentsize) || !Read(cubin, 0x3C, shnum) ||
      !Read(cubin, 0x3E, shstrndx) || shentsize < 64 || shstrndx >= shnum) {
    return bad("section header table");
  }
  std::vector<Section> sections(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint64_t at = shoff + uint64_t{i} * shentsize;
    Section& s = sections[i];
    if (!Read(cubin, at, s.name) || !Read(cubin, at + 4, s.type) || !Read(cubin, at + 24, s.offset) ||
        !Read(cubin, at + 32, s.size) || !Read(cubin, at + 40, s.link)) {
      return bad("section header");
    }
    constexpr uint32_t kNoBits = 8;  // e.g. .nv.shared.*: a size, but no bytes in the file
    if (s.type != kNoBits && (s.offset > cubin.size() || cubin.size() - s.offset < s.size)) {
      return bad("section bounds");
    }
  }
  // Symbol index -> name, from the symbol table and its string table.
  std::map<uint32_t, std::string> symbols;
  for (const Section& s : sections) {
    if (s.type != kSymtab || s.link >= sections.size()) continue;
    const Section& names = sections[s.link];
    for (uint64_t i = 0; i * 24 + 24 <= s.size; ++i) {
      uint32_t name = 0;
      Read(cubin, s.offset + i * 24, name);
      symbols[static_cast<uint32_t>(i)] = CString(cubin, names.offset + name);
    }
  }
  std::map<std::string, ResourceUsage> out;
  const Section& section_names = sections[shstrndx];
  for (const Section& s : sections) {
    if (CString(cubin, section_names.offset + s.name) != ".nv.info") continue;
    uint64_t at = s.offset;
    const uint64_t end = s.offset + s.size;
    while (at + 4 <= end) {
      const uint8_t format = static_cast<uint8_t>(cubin[at]);
      const uint8_t attribute = static_cast<uint8_t>(cubin[at + 1]);
      if (format == kFormatSized) {
        uint16_t size = 0;
        Read(cubin, at + 2, size);
        if (at + 4 + size > end) return bad(".nv.info entry");
        uint32_t symbol = 0, value = 0;
        if (size == 8 && (attribute == kRegCount || attribute == kFrameSize)) {
          Read(cubin, at + 4, symbol);
          Read(cubin, at + 8, value);
          auto name = symbols.find(symbol);
          if (name != symbols.end()) {
            ResourceUsage& usage = out[name->second];
            if (attribute == kRegCount) usage.registers = static_cast<int>(value);
            if (attribute == kFrameSize) usage.stack_bytes = static_cast<int>(value);
          }
        }
        at += 4 + size;
      } else if (format == kFormatHalf || format == kFormatByte || format == kFormatNoValue) {
        at += 4;
      } else {
        return bad(".nv.info format");
      }
    }
  }
  return out;
}

}  // namespace cutune::compiler

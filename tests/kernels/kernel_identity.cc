// kernel_identity: proof that an edit of a kernel source changed no candidate's machine code.
// Compiles every valid candidate of a family's default space (and its reference module) twice
// with NVRTC, the daemon's way (compiler::Compile, the family's Defines): once from a base source
// file (main's kernels/matmul.cu, see scripts/kernel_identity.sh) and once from the source this
// build embeds (family->source()). Each pair's cubins are compared byte for byte and, where they
// differ, section by section (Compare): the machine code (SASS) and the kernel's attributes must
// be equal, only data no code reads may differ. Differing pairs are listed with each side's
// registers, spills and instruction count; so are candidates whose log has more warnings than
// the base's. No GPU (and no cuobjdump) needed.
//
//   kernel_identity --family matmul --base base.cu [--arch sm_90] [--threads 2] [--stride N]
//                   [--keep DIR]
//
// Exit status 0 when every candidate's code is identical and no warning was added, 1 otherwise, 2
// when the base source cannot be read or a candidate does not compile. --keep DIR writes both
// cubins of every pair that differs (for cuobjdump -sass where there is one).
#include <atomic>
#include <cstdint>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "kernels/family.h"
#include "server/compiler/compiler.h"

namespace cutune::kernels {
namespace {

struct Options {
  std::string family;
  std::string base;
  std::string arch = "sm_90";
  int threads = 2;
  std::string keep;
  int stride = 1;  // every stride-th candidate (quick checks while editing)
};

// A cubin (an ELF64 image) as far as the comparison needs it.
struct Cubin {
  std::map<std::string, std::string> sections;  // name -> bytes (empty for NOBITS)
  std::map<std::string, uint64_t> nobits;       // NOBITS sections (shared memory) -> size
  // Symbols by index: a SECTION symbol carries its section's name. Functions and data objects
  // by name, with their sizes.
  std::vector<std::string> symbol_names;
  std::map<std::string, uint64_t> functions, objects;
  bool ok = false;
};

// The last identifier of an Itanium-mangled nested name (_ZN...3kBME -> kBM); others unchanged.
std::string ShortName(const std::string& name) {
  if (!name.starts_with("_ZN") || !name.ends_with("E")) return name;
  std::string last = name;
  size_t at = 3;
  while (at < name.size() && std::isdigit(static_cast<unsigned char>(name[at]))) {
    size_t length = 0;
    while (at < name.size() && std::isdigit(static_cast<unsigned char>(name[at]))) {
      length = length * 10 + static_cast<size_t>(name[at++] - '0');
    }
    if (at + length > name.size()) break;
    last = name.substr(at, length);
    at += length;
  }
  return last;
}

Cubin ReadCubin(std::string_view elf) {
  Cubin out;
  auto read = [&](uint64_t at, auto& value) {
    if (at > elf.size() || elf.size() - at < sizeof(value)) return false;
    std::memcpy(&value, elf.data() + at, sizeof(value));
    return true;
  };
  auto c_string = [&](uint64_t at) {
    if (at >= elf.size()) return std::string();
    return std::string(elf.data() + at, strnlen(elf.data() + at, elf.size() - at));
  };
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (elf.size() < 64 || elf.substr(0, 4) != "\x7f" "ELF" || !read(0x28, shoff) ||
      !read(0x3A, shentsize) || !read(0x3C, shnum) || !read(0x3E, shstrndx) ||
      shentsize < 64 || shstrndx >= shnum) {
    return out;
  }
  struct Header {
    uint32_t name = 0, type = 0, link = 0;
    uint64_t offset = 0, size = 0;
    std::string label;
  };
  constexpr uint32_t kSymtab = 2, kNoBits = 8;
  std::vector<Header> headers(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint64_t at = shoff + uint64_t{i} * shentsize;
    Header& h = headers[i];
    if (!read(at, h.name) || !read(at + 4, h.type) || !read(at + 24, h.offset) ||
        !read(at + 32, h.size) || !read(at + 40, h.link)) {
      return out;
    }
    if (h.type != kNoBits && (h.offset > elf.size() || elf.size() - h.offset < h.size)) {
      return out;
    }
  }
  for (Header& h : headers) {
    h.label = c_string(headers[shstrndx].offset + h.name);
    if (h.label.empty()) continue;
    if (h.type == kNoBits) {
      out.nobits[h.label] = h.size;
      out.sections[h.label];
    } else {
      out.sections[h.label] = std::string(elf.substr(h.offset, h.size));
    }
  }
  for (const Header& h : headers) {
    if (h.type != kSymtab || h.link >= headers.size()) continue;
    for (uint64_t at = h.offset; at + 24 <= h.offset + h.size; at += 24) {
      uint32_t name = 0;
      uint8_t info = 0;
      uint16_t section = 0;
      uint64_t size = 0;
      read(at, name);
      read(at + 4, info);
      read(at + 6, section);
      read(at + 16, size);
      std::string label = c_string(headers[h.link].offset + name);
      constexpr uint8_t kObject = 1, kFunction = 2, kSection = 3;
      const uint8_t type = info & 0xf;
      if (type == kSection && section < headers.size()) label = headers[section].label;
      if (type == kFunction) out.functions[label] = size;
      if (type == kObject) out.objects[label] = size;
      out.symbol_names.push_back(label);
    }
  }
  out.ok = true;
  return out;
}

// The entries of an .nv.info section (their encoding: server/compiler/cubin_info.cc), with the
// symbol indices they hold written as names, so that two cubins whose symbol tables are ordered
// differently compare equal where they say the same: module-wide entries (.nv.info) start
// with the function's symbol; a kernel's EIATTR_PARAM_CBANK (0x0a) with its constant bank's.
std::vector<std::string> InfoEntries(const Cubin& cubin, const std::string& section) {
  std::vector<std::string> entries;
  const std::string& bytes = cubin.sections.at(section);
  const bool module_wide = section == ".nv.info";
  constexpr uint8_t kSized = 0x04, kParamCbank = 0x0a;
  for (size_t at = 0; at + 4 <= bytes.size();) {
    const uint8_t format = static_cast<uint8_t>(bytes[at]);
    const uint8_t attribute = static_cast<uint8_t>(bytes[at + 1]);
    uint16_t size = 2;
    if (format == kSized) std::memcpy(&size, bytes.data() + at + 2, 2);
    const size_t payload = format == kSized ? at + 4 : at + 2;
    if (payload + size > bytes.size()) break;
    std::string entry = std::to_string(format) + ":" + std::to_string(attribute) + ":";
    size_t value = payload;
    if (format == kSized && size >= 4 && (module_wide || attribute == kParamCbank)) {
      uint32_t symbol = 0;
      std::memcpy(&symbol, bytes.data() + payload, 4);
      entry += symbol < cubin.symbol_names.size() ? cubin.symbol_names[symbol] : "?";
      value += 4;
    }
    entry += ":" + bytes.substr(value, payload + size - value);
    entries.push_back(std::move(entry));
    at = payload + size;
  }
  return entries;
}

struct Side {
  std::string cubin;
  std::map<std::string, ResourceUsage> resources;
  std::string log;
};

struct Job {
  std::string what;  // the candidate's parameters, or "reference"
  std::vector<std::string> options;
  Side base, current;
  std::string error;
};

std::optional<Side> CompileOne(const std::string& source, const std::string& name,
                               const std::vector<std::string>& options, const std::string& arch,
                               std::string* error) {
  compiler::CompileRequest request;
  request.source = source;
  request.source_name = name;
  request.options = options;
  request.arch = arch;
  absl::StatusOr<compiler::CompileResult> result = compiler::Compile(request);
  if (!result.ok()) {
    *error = result.status().ToString();
    return std::nullopt;
  }
  if (!result->ok) {
    *error = result->log;
    return std::nullopt;
  }
  return Side{std::move(result->cubin), std::move(result->resources), std::move(result->log)};
}

std::string Describe(const Side& side) {
  std::ostringstream out;
  const Cubin cubin = ReadCubin(side.cubin);
  for (const auto& [function, usage] : side.resources) {
    auto text = cubin.sections.find(".text." + function);
    out << function << ": " << usage.registers << " regs, " << usage.spill_store_bytes << "/"
        << usage.spill_load_bytes << " spill bytes, "
        << (text == cubin.sections.end() ? 0 : text->second.size() / 16) << " instructions; ";
  }
  return out.str();
}

// What is compared, and what may differ. Machine code and everything a launch depends on must be
// equal: every section of code (.text.*, .rela.text.*), each kernel's parameter bank
// (.nv.constant0.*) and attributes (.nv.info.*, symbols as names), the module-wide attributes
// (.nv.info), the shared memory sections' sizes, the functions and their sizes. What may differ
// is data no code reads: NVRTC emits every namespace-scope constexpr as a module global (a known
// NVRTC behaviour; the kernels fold their values), so renaming or adding one changes the data
// objects, their initial values (.nv.global.init), the constant bank of their addresses
// (.nv.constant4 and its relocations) and the symbol and string tables.
struct Verdict {
  enum class Kind { kIdenticalCubin, kIdenticalCode, kDiffers } kind = Kind::kIdenticalCubin;
  std::string detail;  // what differs (kDiffers)
  std::set<std::string> objects_added, objects_removed;
};

bool MayDiffer(const std::string& section) {
  return section == ".symtab" || section == ".strtab" || section == ".shstrtab" ||
         section == ".nv.global.init" || section == ".nv.global" ||
         section == ".nv.constant4" || section == ".rela.nv.constant4" ||
         section == ".rela.debug_frame";
}

Verdict Compare(const Side& a, const Side& b) {
  Verdict v;
  if (a.cubin == b.cubin) return v;
  v.kind = Verdict::Kind::kIdenticalCode;
  const Cubin ca = ReadCubin(a.cubin), cb = ReadCubin(b.cubin);
  std::vector<std::string> differing;
  if (!ca.ok || !cb.ok) differing.push_back("(unreadable cubin)");
  std::set<std::string> names;
  for (const auto& [name, bytes] : ca.sections) names.insert(name);
  for (const auto& [name, bytes] : cb.sections) names.insert(name);
  for (const std::string& name : names) {
    const bool in_a = ca.sections.contains(name), in_b = cb.sections.contains(name);
    if (in_a && in_b && name.starts_with(".nv.info")) {
      if (InfoEntries(ca, name) != InfoEntries(cb, name)) differing.push_back(name);
      continue;
    }
    if (in_a && in_b && ca.sections.at(name) == cb.sections.at(name) &&
        ca.nobits.contains(name) == cb.nobits.contains(name) &&
        (!ca.nobits.contains(name) || ca.nobits.at(name) == cb.nobits.at(name))) {
      continue;
    }
    if (!MayDiffer(name)) differing.push_back(name);
  }
  if (ca.functions != cb.functions) differing.push_back("(functions)");
  for (const auto& [name, size] : ca.objects) {
    if (!cb.objects.contains(name)) {
      v.objects_removed.insert(ShortName(name));
    } else if (cb.objects.at(name) != size) {
      differing.push_back("(size of " + name + ")");
    }
  }
  for (const auto& [name, size] : cb.objects) {
    if (!ca.objects.contains(name)) v.objects_added.insert(ShortName(name));
  }
  for (const std::string& name : differing) v.detail += " " + name;
  if (!differing.empty()) v.kind = Verdict::Kind::kDiffers;
  return v;
}

// ptxas and front-end warnings in a compile log ("matmul.cu(146): warning #177-D: ...").
int Warnings(const std::string& log) {
  int count = 0;
  for (size_t at = log.find("warning"); at != std::string::npos; at = log.find("warning", at + 1)) {
    ++count;
  }
  return count;
}

int Run(const Options& options) {
  const KernelFamily* family = FindFamily(options.family);
  if (family == nullptr) {
    std::fprintf(stderr, "unknown family '%s'\n", options.family.c_str());
    return 2;
  }
  std::ifstream in(options.base, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", options.base.c_str());
    return 2;
  }
  const std::string base((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string current(family->source());
  const std::string name = std::string(family->name()) + ".cu";

  std::vector<Job> jobs;
  size_t seen = 0;
  family->default_space().ForEachValid([&](uint64_t, const Params& params) {
    if (seen++ % static_cast<size_t>(options.stride) != 0) return;
    jobs.push_back({FormatParams(params), family->Defines(params), {}, {}, {}});
  });
  const size_t candidates = jobs.size();
  jobs.push_back({"reference", family->ReferenceDefines(), {}, {}, {}});

  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      Job& job = jobs[i];
      std::optional<Side> a = CompileOne(base, name, job.options, options.arch, &job.error);
      if (!a) continue;
      std::optional<Side> b = CompileOne(current, name, job.options, options.arch, &job.error);
      if (!b) continue;
      job.base = *std::move(a);
      job.current = *std::move(b);
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < options.threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();

  int identical_cubin = 0, identical_code = 0, differ = 0, errors = 0, new_warnings = 0;
  std::set<std::string> added, removed;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& job = jobs[i];
    if (!job.error.empty()) {
      ++errors;
      std::printf("ERROR %s: %s\n", job.what.c_str(), job.error.c_str());
      continue;
    }
    if (Warnings(job.current.log) > Warnings(job.base.log)) {
      ++new_warnings;
      std::printf("more warnings %s:\n%s\n", job.what.c_str(), job.current.log.c_str());
    }
    const Verdict v = Compare(job.base, job.current);
    added.insert(v.objects_added.begin(), v.objects_added.end());
    removed.insert(v.objects_removed.begin(), v.objects_removed.end());
    if (v.kind == Verdict::Kind::kIdenticalCubin) {
      ++identical_cubin;
      continue;
    }
    if (v.kind == Verdict::Kind::kIdenticalCode) {
      ++identical_code;
      continue;
    }
    ++differ;
    std::printf("differs (%s) %s\n  base:    %s\n  current: %s\n", v.detail.c_str() + 1,
                job.what.c_str(), Describe(job.base).c_str(), Describe(job.current).c_str());
    if (!options.keep.empty()) {
      const std::string stem = options.keep + "/" + options.family + "-" + std::to_string(i);
      std::ofstream(stem + "-base.cubin", std::ios::binary) << job.base.cubin;
      std::ofstream(stem + "-current.cubin", std::ios::binary) << job.current.cubin;
      std::ofstream(stem + ".txt") << job.what << "\n";
    }
  }
  auto join = [](const std::set<std::string>& objects) {
    std::string out;
    for (const std::string& object : objects) out += (out.empty() ? "" : " ") + object;
    return out.empty() ? std::string("none") : out;
  };
  std::printf("data objects (never read) only in the current cubins: %s\n", join(added).c_str());
  std::printf("data objects only in the base cubins: %s\n", join(removed).c_str());
  const std::string sampled =
      options.stride > 1 ? " (every " + std::to_string(options.stride) + ". valid)" : "";
  std::printf(
      "%s on %s: %zu candidates%s + reference: %d identical cubins, %d identical code and kernel "
      "attributes (data objects differ), %d differ, %d compile errors, %d with more warnings; "
      "identical SASS %d/%zu\n",
      options.family.c_str(), options.arch.c_str(), candidates,
      sampled.c_str(),
      identical_cubin, identical_code, differ, errors, new_warnings,
      identical_cubin + identical_code, jobs.size());
  if (errors > 0) return 2;
  return differ > 0 || new_warnings > 0 ? 1 : 0;
}

}  // namespace
}  // namespace cutune::kernels

int main(int argc, char** argv) {
  cutune::kernels::Options options;
  CLI::App app{"Compiles every candidate of a family from a base source and from this build's "
               "embedded source and compares the cubins (SASS)"};
  app.add_option("--family", options.family, "Kernel family (transpose, matmul)")->required();
  app.add_option("--base", options.base, "The base source file to compare against")->required();
  app.add_option("--arch", options.arch, "Target architecture")->capture_default_str();
  app.add_option("--threads", options.threads, "Compile threads")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--stride", options.stride, "Only every N-th valid candidate (1: all)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--keep", options.keep, "Directory for both cubins of every pair that differs");
  CLI11_PARSE(app, argc, argv);
  return cutune::kernels::Run(options);
}

// Compiles every valid candidate of both default spaces with NVRTC for sm_90 (and a fixed sample
// for sm_80): each one compiles or is pruned with a stated reason, and the resource reports are
// checked for spills. No GPU needed. Slow (about a thousand compilations): labelled "slow".
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/family.h"
#include "server/compiler/compiler.h"

namespace cutune::kernels {
namespace {

struct Job {
  const KernelFamily* family = nullptr;
  Params params;
  std::string arch;
  Shape shape;  // compiled as it runs there (ShapeDefines); empty: shape-free
  // Filled in by Run.
  std::optional<std::string> pruned;
  bool compiled = false;
  std::string error;
  ResourceUsage usage;
};

DeviceLimits Limits(const std::string& arch) { return *DeviceLimits::ForArch(arch); }

// Runs the jobs on two threads (the CI machines have two cores).
void Run(std::vector<Job>& jobs) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      Job& job = jobs[i];
      const DeviceLimits limits = Limits(job.arch);
      job.pruned = job.family->PruneForDevice(job.params, limits);
      if (job.pruned) continue;
      compiler::CompileRequest request;
      request.source = std::string(job.family->source());
      request.source_name = std::string(job.family->name()) + ".cu";
      request.options = job.family->Defines(job.params);
      for (std::string& define : job.family->ShapeDefines(job.params, job.shape)) {
        request.options.push_back(std::move(define));
      }
      request.arch = job.arch;
      absl::StatusOr<compiler::CompileResult> result = compiler::Compile(request);
      if (!result.ok()) {
        job.error = result.status().ToString();
        continue;
      }
      if (!result->ok) {
        job.error = result->log;
        continue;
      }
      auto found = result->resources.find(std::string(KernelFamily::kKernelName));
      if (found == result->resources.end()) {
        job.error = "no resource report for cutune_kernel:\n" + result->log;
        continue;
      }
      job.compiled = true;
      job.usage = found->second;
      job.pruned = job.family->PruneCompiled(job.params, job.usage, limits);
    }
  };
  std::thread helper(work);
  work();
  helper.join();
}

// Every stride-th valid candidate (of those with shape defines at `shape`, when it is given).
void CompileAndReport(const std::string& arch, int stride, const Shape& shape = {}) {
  std::vector<Job> jobs;
  for (const KernelFamily* family : AllFamilies()) {
    size_t n = 0;
    family->default_space().ForEachValid([&](uint64_t, const Params& params) {
      if (!shape.empty() && (family->ValidateShape(shape).ok() == false ||
                             family->ShapeDefines(params, shape).empty())) {
        return;
      }
      if (n++ % stride != 0) return;
      Job job;
      job.family = family;
      job.params = params;
      job.arch = arch;
      job.shape = shape;
      jobs.push_back(std::move(job));
    });
  }
  const auto start = std::chrono::steady_clock::now();
  Run(jobs);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::map<std::string, std::map<std::string, int>> totals;
  for (const Job& job : jobs) {
    const std::string family(job.family->name());
    const std::string what = FormatParams(job.params) + " for " + arch +
                             (job.shape.empty() ? "" : " at " + FormatShape(job.shape));
    EXPECT_TRUE(job.error.empty()) << what << ": " << job.error;
    ++totals[family]["candidates"];
    if (job.compiled) ++totals[family]["compiled"];
    if (job.pruned) {
      ++totals[family]["pruned"];
      std::printf("pruned %s %s: %s\n", family.c_str(), what.c_str(), job.pruned->c_str());
    }
    if (job.usage.spill_store_bytes + job.usage.spill_load_bytes > 0) {
      ++totals[family]["spilling"];
      std::printf("spills %s %s: %d regs, %d/%d bytes spilled (store/load)\n", family.c_str(),
                  what.c_str(), job.usage.registers, job.usage.spill_store_bytes,
                  job.usage.spill_load_bytes);
      // Only a register cap may force spills: a minimum of blocks per SM, or a block over 256
      // threads (at most 65536 / threads registers each); in a misaligned-row build also the
      // 255 registers a thread may have, which its scalar loads take some 128-accumulator
      // tiles past (kernel-notes.md, session 16).
      const bool at_thread_cap = !job.shape.empty() && job.usage.registers >= 255 &&
                                 job.params.at("tm") * job.params.at("tn") == 128;
      EXPECT_TRUE(job.params.at("minb") > 0 || job.family->ThreadsPerBlock(job.params) > 256 ||
                  at_thread_cap)
          << what;
    }
    if (job.compiled) {
      totals[family]["max registers"] =
          std::max(totals[family]["max registers"], job.usage.registers);
    }
    // The big register-tiled matmul tiles are the winners-to-be: show what ptxas gave them.
    if (family == "matmul" && job.compiled && job.params.at("tm") * job.params.at("tn") == 64 &&
        job.params.at("bm") >= 128 && job.params.at("bn") >= 128) {
      std::printf("big tile %s: %d registers, %d bytes spill stores, %d bytes static smem\n",
                  what.c_str(), job.usage.registers, job.usage.spill_store_bytes,
                  job.usage.static_shared_bytes);
    }
  }
  for (const auto& [family, counts] : totals) {
    std::printf("%s on %s (every %d. valid candidate):", family.c_str(), arch.c_str(), stride);
    for (const auto& [name, count] : counts) std::printf(" %s=%d", name.c_str(), count);
    std::printf("\n");
  }
  std::printf("%zu compilations for %s in %.1f s\n", jobs.size(), arch.c_str(), seconds);
}

TEST(CompileAllTest, EveryValidCandidateCompilesForSm90) { CompileAndReport("sm_90", 1); }

TEST(CompileAllTest, SampleCompilesForSm80) { CompileAndReport("sm_80", 7); }

// Rows that are not 16-byte aligned (K and N odd) build the scalar fast path: a sample of those
// candidates compiles, within the same spill rule.
TEST(CompileAllTest, MisalignedSampleCompilesForSm90) {
  CompileAndReport("sm_90", 7, {4097, 1023, 777});
}

TEST(CompileAllTest, ReferenceAndSupportModules) {
  for (const std::string arch : {"sm_80", "sm_90"}) {
    for (const KernelFamily* family : AllFamilies()) {
      compiler::CompileRequest request;
      request.source = std::string(family->source());
      request.options = family->ReferenceDefines();
      request.arch = arch;
      absl::StatusOr<compiler::CompileResult> result = compiler::Compile(request);
      ASSERT_TRUE(result.ok()) << result.status();
      ASSERT_TRUE(result->ok) << result->log;
      // The reference module carries the reference only; candidates never carry it.
      EXPECT_TRUE(result->resources.contains(std::string(KernelFamily::kReferenceName)));
      EXPECT_FALSE(result->resources.contains(std::string(KernelFamily::kKernelName)));

      request.options = family->Defines(family->baseline());
      result = compiler::Compile(request);
      ASSERT_TRUE(result.ok()) << result.status();
      ASSERT_TRUE(result->ok) << result->log;
      EXPECT_TRUE(result->resources.contains(std::string(KernelFamily::kKernelName)));
      EXPECT_FALSE(result->resources.contains(std::string(KernelFamily::kReferenceName)));
    }
    compiler::CompileRequest support;
    support.source = std::string(SupportSource());
    support.arch = arch;
    absl::StatusOr<compiler::CompileResult> result = compiler::Compile(support);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_TRUE(result->ok) << result->log;
    EXPECT_TRUE(result->resources.contains(std::string(kFillName)));
    EXPECT_TRUE(result->resources.contains(std::string(kCompareName)));
  }
}

}  // namespace
}  // namespace cutune::kernels

// cutune-client-bench: what the client library costs a program (run on a GPU host; results in
// bench/results/client-runtime.md).
//   - process start (main) to the first launch done: context, lookup (daemon or table file),
//     module load, launch and synchronize, each phase timed;
//   - a repeated kernel() from the in-process cache;
//   - per-launch overhead of Kernel::Launch over a raw cuLaunchKernel of the same cubin, with and
//     without check_pointers (host time to enqueue, tiny kernel, batches of 500).
//
//   cutune-client-bench [--server ADDR | --table FILE] [--table FILE] [--launches N]
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cutune/client.h"
#include "server/cuda/driver.h"

namespace {

using Clock = std::chrono::steady_clock;
const Clock::time_point kMainStart = Clock::now();

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

int Die(const std::string& what) {
  std::fprintf(stderr, "cutune-client-bench: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Clock::time_point start = kMainStart;
  CLI::App app("The client library's costs: first launch, cache, per-launch overhead");
  std::string server, table;
  int launches = 20000;
  app.add_option("--server", server, "cutuned to ask (default: offline from --table)");
  app.add_option("--table", table, "Table file (offline, or the fallback)")->required();
  app.add_option("--launches", launches, "Launches timed per variant");
  CLI11_PARSE(app, argc, argv);

  namespace ct = cutune::client;
  auto driver = cutune::cuda::Driver();
  if (!driver.ok()) return Die(std::string(driver.status().message()));
  const cutune::cuda::DriverApi& api = **driver;
  CUdevice device = 0;
  CUcontext context = nullptr;
  api.cuDeviceGet(&device, 0);
  api.cuDevicePrimaryCtxRetain(&context, device);
  api.cuCtxSetCurrent(context);
  const Clock::time_point context_ready = Clock::now();

  ct::ClientOptions options;
  options.table = table;
  options.server = server;
  options.offline = server.empty();
  try {
    ct::Client client(options);
    const ct::Problem problem{"matmul", {4096, 4096, 4096}};
    const int64_t n = 4096;
    CUdeviceptr a = 0, b = 0, c = 0;
    api.cuMemAlloc(&a, n * n * 4);
    api.cuMemAlloc(&b, n * n * 4);
    api.cuMemAlloc(&c, n * n * 4);
    const Clock::time_point buffers_ready = Clock::now();
    ct::Kernel& kernel = client.kernel(problem);
    const Clock::time_point kernel_ready = Clock::now();
    kernel.Launch(nullptr, reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(b),
                  reinterpret_cast<float*>(c));
    const Clock::time_point launched = Clock::now();
    api.cuCtxSynchronize();
    const Clock::time_point done = Clock::now();
    std::printf("answers from: %s (%s, rung %s)\n",
                kernel.answer().from_table ? "the table file" : "the daemon",
                options.offline ? table.c_str() : server.c_str(), kernel.answer().rung.c_str());
    std::printf("main -> context ready (cuInit, primary context; the program's own): %8.2f ms\n",
                Ms(start, context_ready));
    std::printf("buffers (3 x 64 MiB, the program's own):                         %8.2f ms\n",
                Ms(context_ready, buffers_ready));
    std::printf("first kernel(): lookup + cubin + module load + attributes:       %8.2f ms\n",
                Ms(buffers_ready, kernel_ready));
    std::printf("first Launch() call:                                              %8.3f ms\n",
                Ms(kernel_ready, launched));
    std::printf("kernel run to completion (matmul 4096^3):                        %8.2f ms\n",
                Ms(launched, done));
    std::printf("cutune's share of the first launch (kernel() + Launch()):        %8.2f ms\n",
                Ms(buffers_ready, launched));

    std::vector<double> cached;
    for (int i = 0; i < 1000; ++i) {
      const Clock::time_point t0 = Clock::now();
      ct::Kernel& again = client.kernel(problem);
      cached.push_back(Ms(t0, Clock::now()) * 1000);
      if (&again != &kernel) return Die("the cache returned another kernel");
    }
    std::sort(cached.begin(), cached.end());
    std::printf("kernel() again, from the in-process cache: median %.2f us, p99 %.2f us\n",
                cached[cached.size() / 2], cached[cached.size() * 99 / 100]);
    const ct::Problem other{"matmul", {4096, 4096, 4000}};
    const Clock::time_point o0 = Clock::now();
    client.kernel(other);
    std::printf("kernel() of another problem (new lookup + load):                 %8.2f ms\n",
                Ms(o0, Clock::now()));

    // Per-launch overhead: a 64x64 transpose, the same cubin launched raw and through Launch.
    const ct::Problem tiny{"transpose", {64, 64}};
    ct::Kernel& through = client.kernel(tiny);
    ct::ClientOptions checked_options = options;
    checked_options.check_pointers = true;
    ct::Client checked_client(checked_options);
    ct::Kernel& checked = checked_client.kernel(tiny);
    CUstream stream = nullptr;
    api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
    CUfunction raw = through.function(stream);  // the very function Launch launches
    const ct::Answer& t = through.answer();
    const float* in = reinterpret_cast<const float*>(a);
    float* out = reinterpret_cast<float*>(c);
    int rows = 64, cols = 64;
    CUdeviceptr raw_in = a, raw_out = c;
    void* args[] = {&raw_in, &raw_out, &rows, &cols};
    double raw_ms = 0, launch_ms = 0, checked_ms = 0;
    const int batch = 500;
    for (int done_launches = 0; done_launches < launches; done_launches += batch) {
      Clock::time_point t0 = Clock::now();
      for (int i = 0; i < batch; ++i) {
        api.cuLaunchKernel(raw, t.grid[0], t.grid[1], t.grid[2], t.block[0], t.block[1],
                           t.block[2], t.dynamic_shared_bytes, stream, args, nullptr);
      }
      raw_ms += Ms(t0, Clock::now());
      api.cuStreamSynchronize(stream);
      t0 = Clock::now();
      for (int i = 0; i < batch; ++i) through.Launch(stream, in, out);
      launch_ms += Ms(t0, Clock::now());
      api.cuStreamSynchronize(stream);
      t0 = Clock::now();
      for (int i = 0; i < batch; ++i) checked.Launch(stream, in, out);
      checked_ms += Ms(t0, Clock::now());
      api.cuStreamSynchronize(stream);
    }
    const double per = 1e6 / launches;  // ms total -> ns per launch
    std::printf("per launch (host, %d launches each): raw cuLaunchKernel %.0f ns, Kernel::Launch "
                "%.0f ns (+%.0f ns), with check_pointers %.0f ns (+%.0f ns)\n",
                launches, raw_ms * per, launch_ms * per, (launch_ms - raw_ms) * per,
                checked_ms * per, (checked_ms - raw_ms) * per);
    std::printf("main -> end: %.1f ms\n", Ms(start, Clock::now()));
  } catch (const ct::Error& e) {
    return Die(e.what());
  }
  return 0;
}

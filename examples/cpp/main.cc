// Multiply two matrices and transpose one with kernels tuned by cutune, in a few lines: ask for
// the kernel of each problem, launch it on a stream, check the result on the CPU.
//
//   cutune-example [--table FILE] [--offline] [--model NAME] [M N K]
//
// Without a GPU (or with --model and no device) it prints the answers and stops before the
// launch.
#include <cuda_runtime.h>
#include <cutune/client.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

int Fail(const char* what, cudaError_t e) {
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return 1;
}

void Print(const cutune::client::Answer& a) {
  std::printf("%s", a.problem.family.c_str());
  for (size_t i = 0; i < a.problem.shape.size(); ++i) {
    std::printf("%s%lld", i ? "x" : " ", static_cast<long long>(a.problem.shape[i]));
  }
  std::printf(": %s answer for %s%s, params", a.rung.c_str(), a.device_model.c_str(),
              a.from_table ? " (from the table file)" : "");
  for (const auto& [name, value] : a.params) {
    std::printf(" %s=%lld", name.c_str(), static_cast<long long>(value));
  }
  if (a.expected_slowdown > 0) std::printf(", expected slowdown %.2f", a.expected_slowdown);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  cutune::client::ClientOptions options;
  std::vector<long long> dims;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--table" && i + 1 < argc) {
      options.table = argv[++i];
    } else if (arg == "--offline") {
      options.offline = true;
    } else if (arg == "--model" && i + 1 < argc) {
      options.device_model = argv[++i];
    } else {
      dims.push_back(std::atoll(argv[i]));
    }
  }
  const long long m = dims.size() == 3 ? dims[0] : 1000, n = dims.size() == 3 ? dims[1] : 3000,
                  k = dims.size() == 3 ? dims[2] : 500;
  try {
    cutune::client::Client tuner(options);
    const cutune::client::Problem matmul{"matmul", {m, n, k}};
    const cutune::client::Problem transpose{"transpose", {m, k}};
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      if (options.device_model.empty()) {
        std::fprintf(stderr, "no GPU here: pass --model NAME to see the answers\n");
        return 3;
      }
      Print(tuner.Get(matmul));
      Print(tuner.Get(transpose));
      std::printf("no GPU here: stopping before the launch\n");
      return 0;
    }
    // The program's own buffers and stream, as any CUDA program has them.
    std::vector<float> a(m * k), b(k * n), c(m * n), t(k * m);
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> u(-1, 1);
    for (float& x : a) x = u(rng);
    for (float& x : b) x = u(rng);
    float *da, *db, *dc, *dt;
    if (auto e = cudaMalloc(&da, a.size() * 4); e) return Fail("cudaMalloc", e);
    if (auto e = cudaMalloc(&db, b.size() * 4); e) return Fail("cudaMalloc", e);
    if (auto e = cudaMalloc(&dc, c.size() * 4); e) return Fail("cudaMalloc", e);
    if (auto e = cudaMalloc(&dt, t.size() * 4); e) return Fail("cudaMalloc", e);
    cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
    cudaStream_t stream;
    cudaStreamCreate(&stream);

    // The two calls this example is about.
    cutune::client::Kernel& mm = tuner.kernel(matmul);
    mm.Launch(stream, static_cast<const float*>(da), static_cast<const float*>(db), dc);
    tuner.kernel(transpose).Launch(stream, static_cast<const float*>(da), dt);

    if (auto e = cudaStreamSynchronize(stream); e) return Fail("the launch", e);
    Print(mm.answer());
    Print(tuner.kernel(transpose).answer());
    cudaMemcpy(c.data(), dc, c.size() * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(t.data(), dt, t.size() * 4, cudaMemcpyDeviceToHost);
    // Spot-check C against a double-precision dot product and the transpose exactly.
    double worst = 0;
    for (int s = 0; s < 256; ++s) {
      const long long i = rng() % m, j = rng() % n;
      double ref = 0, mag = 0;
      for (long long p = 0; p < k; ++p) {
        ref += double(a[i * k + p]) * b[p * n + j];
        mag += std::fabs(double(a[i * k + p]) * b[p * n + j]);
      }
      worst = std::fmax(worst, std::fabs(c[i * n + j] - ref) / (mag + 1e-30));
    }
    bool transposed = true;
    for (long long i = 0; i < m && transposed; ++i) {
      for (long long p = 0; p < k; ++p) transposed &= t[p * m + i] == a[i * k + p];
    }
    std::printf("matmul: worst relative error %.2e over 256 sampled elements; transpose %s\n",
                worst, transposed ? "exact" : "WRONG");
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dt);
    return worst < 1e-5 && transposed ? 0 : 1;
  } catch (const cutune::client::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}

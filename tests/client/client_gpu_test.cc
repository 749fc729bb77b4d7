// The client library on a real GPU (label gpu): answers launched through Kernel::Launch on fresh
// random inputs, matmul compared with cuBLAS SGEMM (relative L2 error <= 1e-4, the sweep's own
// bound) and transpose checked exactly, on odd, prime, skinny and split-K shapes; split-K on two
// streams at once; the pointer checks. Answers come from $CUTUNE_TEST_SERVER when set (a daemon),
// else offline from the shipped H200 table.
#include <cuda.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cutune/client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/cuda/check.h"
#include "server/cuda/cublas.h"
#include "server/cuda/driver.h"
#include "server/cuda/handles.h"

namespace cutune::client {
namespace {

using ::testing::HasSubstr;

class ClientGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto driver = cuda::Driver();
    if (!driver.ok()) GTEST_SKIP() << driver.status();
    api_ = *driver;
    CUdevice device = 0;
    ASSERT_EQ(api_->cuDeviceGet(&device, 0), CUDA_SUCCESS);
    ASSERT_EQ(api_->cuDevicePrimaryCtxRetain(&context_, device), CUDA_SUCCESS);
    ASSERT_EQ(api_->cuCtxSetCurrent(context_), CUDA_SUCCESS);
    auto stream = cuda::Stream::Create();
    ASSERT_TRUE(stream.ok());
    stream_ = std::make_unique<cuda::Stream>(*std::move(stream));
    seed_ = std::random_device{}();
    RecordProperty("seed", std::to_string(seed_));
  }

  static ClientOptions Options() {
    ClientOptions o;
    // On a GPU host the tree sits elsewhere: $CUTUNE_TEST_TABLES names its tables/ folder.
    const char* tables = std::getenv("CUTUNE_TEST_TABLES");
    o.table = std::string(tables ? tables : CUTUNE_TABLES_DIR) + "/nvidia-h200.json";
    if (const char* server = std::getenv("CUTUNE_TEST_SERVER")) {
      o.server = server;
    } else {
      o.offline = true;
    }
    return o;
  }

  cuda::DeviceBuffer Upload(const std::vector<float>& host) {
    auto buffer = cuda::DeviceBuffer::Allocate(host.size() * 4);
    EXPECT_TRUE(buffer.ok());
    EXPECT_EQ(api_->cuMemcpyHtoD(buffer->get(), host.data(), host.size() * 4), CUDA_SUCCESS);
    return *std::move(buffer);
  }
  std::vector<float> Download(const cuda::DeviceBuffer& buffer, size_t n) {
    std::vector<float> host(n);
    EXPECT_EQ(api_->cuMemcpyDtoH(host.data(), buffer.get(), n * 4), CUDA_SUCCESS);
    return host;
  }
  std::vector<float> Random(size_t n) {
    std::mt19937 rng(seed_++);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
  }
  static const float* In(const cuda::DeviceBuffer& b) {
    return reinterpret_cast<const float*>(b.get());
  }
  static float* Out(const cuda::DeviceBuffer& b) { return reinterpret_cast<float*>(b.get()); }

  // ||C - ref||_2 / ||ref||_2 for C from `kernel` against cuBLAS on the same inputs.
  double MatmulError(Kernel& kernel, int64_t m, int64_t n, int64_t k, CUstream stream) {
    auto a = Upload(Random(m * k)), b = Upload(Random(k * n));
    auto c = cuda::DeviceBuffer::Allocate(m * n * 4), ref = cuda::DeviceBuffer::Allocate(m * n * 4);
    EXPECT_TRUE(c.ok() && ref.ok());
    kernel.Launch(stream, In(a), In(b), Out(*c));
    auto blas = cuda::Cublas::Create(stream);
    EXPECT_TRUE(blas.ok()) << blas.status();
    EXPECT_TRUE(blas->Sgemm(a.get(), b.get(), ref->get(), m, n, k).ok());
    EXPECT_EQ(api_->cuStreamSynchronize(stream), CUDA_SUCCESS);
    const std::vector<float> got = Download(*c, m * n), want = Download(*ref, m * n);
    double diff = 0, norm = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      diff += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
      norm += double(want[i]) * want[i];
    }
    return std::sqrt(diff / norm);
  }

  const cuda::DriverApi* api_ = nullptr;
  CUcontext context_ = nullptr;
  std::unique_ptr<cuda::Stream> stream_;
  unsigned seed_ = 0;
};

TEST_F(ClientGpuTest, MatmulAnswersMatchCublasOnAwkwardShapes) {
  Client client(Options());
  int split = 0;
  for (const std::vector<int64_t>& s : std::vector<std::vector<int64_t>>{
           {4096, 4096, 4096}, {1000, 3000, 500}, {257, 509, 1021}, {127, 8192, 4096},
           {16, 16, 16384}, {64, 4096, 4096}, {1000, 1000, 77}, {4097, 1023, 777},
           {33, 65, 129}, {1, 1, 1}, {768, 3072, 1024}, {2048, 512, 8192}}) {
    Kernel& kernel = client.kernel({"matmul", s});
    const Answer& a = kernel.answer();
    split += a.params.at("splitk") > 1;
    const double error = MatmulError(kernel, s[0], s[1], s[2], stream_->get());
    EXPECT_LE(error, 1e-4) << s[0] << "x" << s[1] << "x" << s[2] << " (" << a.rung << ")";
    std::printf("matmul %lldx%lldx%lld: %s, splitk %lld, rel L2 error vs cuBLAS %.2e\n",
                (long long)s[0], (long long)s[1], (long long)s[2], a.rung.c_str(),
                (long long)a.params.at("splitk"), error);
    EXPECT_EQ(&client.kernel({"matmul", s}), &kernel) << "cached per context and problem";
  }
  EXPECT_GT(split, 0) << "a split-K answer was launched";
}

TEST_F(ClientGpuTest, TransposeAnswersAreExactOnOddShapes) {
  Client client(Options());
  for (const std::vector<int64_t>& s : std::vector<std::vector<int64_t>>{
           {8191, 4097}, {1, 1000}, {1000, 1}, {3000, 20000}, {64, 64}, {1000, 3}, {4096, 4096}}) {
    Kernel& kernel = client.kernel({"transpose", s});
    const std::vector<float> in = Random(s[0] * s[1]);
    auto d_in = Upload(in);
    auto d_out = cuda::DeviceBuffer::Allocate(in.size() * 4);
    ASSERT_TRUE(d_out.ok());
    kernel.Launch(stream_->get(), In(d_in), Out(*d_out));
    ASSERT_EQ(api_->cuStreamSynchronize(stream_->get()), CUDA_SUCCESS);
    const std::vector<float> out = Download(*d_out, in.size());
    int64_t wrong = 0;
    for (int64_t r = 0; r < s[0]; ++r) {
      for (int64_t c = 0; c < s[1]; ++c) wrong += out[c * s[0] + r] != in[r * s[1] + c];
    }
    EXPECT_EQ(wrong, 0) << s[0] << "x" << s[1];
    std::printf("transpose %lldx%lld: %s, %lld wrong elements\n", (long long)s[0],
                (long long)s[1], kernel.answer().rung.c_str(), (long long)wrong);
  }
}

// Split-K's turn counters live in the module: the library loads one module per stream, so two
// streams may run the same problem at once and both stay right, launch after launch.
TEST_F(ClientGpuTest, SplitKRunsOnTwoStreamsAtOnce) {
  Client client(Options());
  const std::vector<int64_t> s = {64, 4096, 4096};
  Kernel& kernel = client.kernel({"matmul", s});
  ASSERT_TRUE(kernel.answer().one_module_per_stream) << "the shipped table splits this shape";
  auto other = cuda::Stream::Create();
  ASSERT_TRUE(other.ok());
  auto a = Upload(Random(s[0] * s[2])), b = Upload(Random(s[2] * s[1]));
  auto c1 = cuda::DeviceBuffer::Allocate(s[0] * s[1] * 4), c2 = cuda::DeviceBuffer::Allocate(s[0] * s[1] * 4);
  auto ref = cuda::DeviceBuffer::Allocate(s[0] * s[1] * 4);
  ASSERT_TRUE(c1.ok() && c2.ok() && ref.ok());
  for (int i = 0; i < 50; ++i) {
    kernel.Launch(stream_->get(), In(a), In(b), Out(*c1));
    kernel.Launch(other->get(), In(a), In(b), Out(*c2));
  }
  auto blas = cuda::Cublas::Create(stream_->get());
  ASSERT_TRUE(blas.ok());
  ASSERT_TRUE(blas->Sgemm(a.get(), b.get(), ref->get(), s[0], s[1], s[2]).ok());
  ASSERT_EQ(api_->cuCtxSynchronize(), CUDA_SUCCESS);
  const auto want = Download(*ref, s[0] * s[1]);
  for (const auto* c : {&*c1, &*c2}) {
    const auto got = Download(*c, s[0] * s[1]);
    double diff = 0, norm = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      diff += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
      norm += double(want[i]) * want[i];
    }
    EXPECT_LE(std::sqrt(diff / norm), 1e-4);
  }
}

TEST_F(ClientGpuTest, CheckedPointersCatchAShortAllocationAndHostMemory) {
  ClientOptions o = Options();
  o.check_pointers = true;
  Client client(o);
  Kernel& kernel = client.kernel({"transpose", {1024, 1024}});
  auto big = cuda::DeviceBuffer::Allocate(1024 * 1024 * 4);
  auto small = cuda::DeviceBuffer::Allocate(1024 * 4);
  ASSERT_TRUE(big.ok() && small.ok());
  try {
    kernel.Launch(stream_->get(), In(*big), Out(*small));
    ADD_FAILURE() << "a short output was launched";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("argument out needs 4194304 bytes"));
  }
  alignas(16) static float host[16];
  try {
    kernel.Launch(stream_->get(), In(*big), host);
    ADD_FAILURE() << "host memory was launched";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
  auto fits = cuda::DeviceBuffer::Allocate(1024 * 1024 * 4);
  ASSERT_TRUE(fits.ok());
  kernel.Launch(stream_->get(), In(*big), Out(*fits));  // right sizes: launched
  EXPECT_EQ(api_->cuStreamSynchronize(stream_->get()), CUDA_SUCCESS);
}

}  // namespace
}  // namespace cutune::client

// Support kernels every worker needs: deterministic random fill and output comparison.
// Launch both with 256 threads per block and any grid; they loop over the whole buffer.

namespace {

// SplitMix64 finaliser: a counter-based hash, so every element is independent of the grid.
__device__ __forceinline__ unsigned long long Mix(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

// p[i] = uniform in [-1, 1) on a 2^-23 grid, from hash(seed, i).
extern "C" __global__ void cutune_fill(float* p, long long n, unsigned long long seed) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const unsigned long long key = Mix(seed);
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const unsigned int bits = static_cast<unsigned int>(Mix(key ^ static_cast<unsigned long long>(i)) >> 40);
    p[i] = static_cast<float>(bits) * (1.0f / 8388608.0f) - 1.0f;  // 24 bits -> [0, 2) - 1
  }
}

// sums[0] += sum (out-ref)^2, sums[1] += sum ref^2 (finite outputs only); max_abs_bits gets the
// largest |out-ref| as float bits (non-negative floats order like their bits); a non-finite
// output counts in nonfinite and pushes max_abs_bits to at least +inf, so NaN never passes.
extern "C" __global__ void cutune_compare(const float* out, const float* ref, long long n,
                                          double* sums, unsigned int* max_abs_bits,
                                          unsigned long long* nonfinite) {
  constexpr int kBlock = 256;
  __shared__ double err_part[kBlock];
  __shared__ double ref_part[kBlock];
  __shared__ unsigned int max_part[kBlock];
  __shared__ unsigned long long bad_part[kBlock];

  double err = 0.0;
  double norm = 0.0;
  unsigned int max_bits = 0;
  unsigned long long bad = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float o = out[i];
    const float r = ref[i];
    if (!isfinite(o) || !isfinite(r)) {
      ++bad;
      const unsigned int bits = __float_as_uint(fabsf(o)) & 0x7fffffffu;
      max_bits = max(max_bits, max(bits, 0x7f800000u));
      continue;
    }
    const double d = static_cast<double>(o) - static_cast<double>(r);
    err += d * d;
    norm += static_cast<double>(r) * r;
    max_bits = max(max_bits, __float_as_uint(fabsf(o - r)));
  }

  const int t = threadIdx.x;
  err_part[t] = err;
  ref_part[t] = norm;
  max_part[t] = max_bits;
  bad_part[t] = bad;
  __syncthreads();
  for (int half = kBlock / 2; half > 0; half /= 2) {
    if (t < half) {
      err_part[t] += err_part[t + half];
      ref_part[t] += ref_part[t + half];
      max_part[t] = max(max_part[t], max_part[t + half]);
      bad_part[t] += bad_part[t + half];
    }
    __syncthreads();
  }
  if (t == 0) {
    atomicAdd(&sums[0], err_part[0]);
    atomicAdd(&sums[1], ref_part[0]);
    atomicMax(max_abs_bits, max_part[0]);
    if (bad_part[0] != 0) atomicAdd(nonfinite, bad_part[0]);
  }
}

// lab: rectangular-tile transpose. TR input rows x TC input cols per block, 256 threads.
extern "C" __global__ void __launch_bounds__(256) rect(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[TR][TC + 1];
  const int tiles_x = cols / TC;
  const int tc0 = (blockIdx.x % tiles_x) * TC;
  const int tr0 = (blockIdx.x / tiles_x) * TR;
  const int t = threadIdx.x;
  // load: float4 along input rows
#pragma unroll
  for (int i = t; i < TR * TC / 4; i += 256) {
    const int r = i / (TC / 4), c4 = i % (TC / 4);
    const float4 v = *reinterpret_cast<const float4*>(in + (long long)(tr0 + r) * cols + tc0 + c4 * 4);
    tile[r][c4 * 4 + 0] = v.x; tile[r][c4 * 4 + 1] = v.y; tile[r][c4 * 4 + 2] = v.z; tile[r][c4 * 4 + 3] = v.w;
  }
  __syncthreads();
  // store: output row = input col c, TR floats = TR/4 float4
#pragma unroll
  for (int i = t; i < TR * TC / 4; i += 256) {
    const int c = i / (TR / 4), r4 = i % (TR / 4);
    float4 v;
    v.x = tile[r4 * 4 + 0][c]; v.y = tile[r4 * 4 + 1][c]; v.z = tile[r4 * 4 + 2][c]; v.w = tile[r4 * 4 + 3][c];
    *reinterpret_cast<float4*>(out + (long long)(tc0 + c) * rows + tr0 + r4 * 4) = v;
  }
}

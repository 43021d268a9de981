// A bf16 matrix product through cuBLASLt, checked against the host: D = A^T B with FP32 accumulation.
//
// Build and run (CUDA toolkit with cuBLAS):
//   nvcc -O2 -std=c++17 snippets/gemm/cublaslt_matmul.cu -o cublaslt_matmul -lcublasLt -lcublas
//   ./cublaslt_matmul [M N K [timed_calls]]
//
// The file is host code only (no kernels), so a plain C++ compiler can check it too:
//   g++ -std=c++17 -fsyntax-only -x c++ -I<cuda include> -I<cublas include> snippets/gemm/cublaslt_matmul.cu
//
// API names and arguments follow the cuBLAS documentation, section "Using the cuBLASLt API"
// (https://docs.nvidia.com/cuda/cublas/#using-the-cublaslt-api) and the cublasLt.h header.

// --8<-- [start:example]
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

// Every call is checked: a failing CUDA or cuBLAS call stops the program with its name and line.
#define CHECK_CUDA(call)                                                                        \
  do {                                                                                          \
    cudaError_t err_ = (call);                                                                  \
    if (err_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)
#define CHECK_CUBLAS(call)                                                                           \
  do {                                                                                               \
    cublasStatus_t st_ = (call);                                                                     \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                              \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cublasLtGetStatusString(st_)); \
      std::exit(1);                                                                                  \
    }                                                                                                \
  } while (0)

// bf16 is the top half of a float32; round to nearest, ties to even (the inputs here are finite).
static uint16_t to_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}
static float from_bf16(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

int main(int argc, char** argv) {
  // Sizes: multiples of 16 keep every operand 16-byte aligned, which the tensor-core kernels want.
  int64_t m = 768, n = 512, k = 1024;
  int timed = 20;
  if (argc >= 4) {
    m = std::atoll(argv[1]);
    n = std::atoll(argv[2]);
    k = std::atoll(argv[3]);
  }
  if (argc >= 5) timed = std::atoi(argv[4]);
  if (m < 1 || n < 1 || k < 1 || timed < 1) {
    std::fprintf(stderr, "usage: %s [M N K [timed_calls]] with positive sizes\n", argv[0]);
    return 2;
  }

  // Column-major storage, as in BLAS. A is stored K x M (lda = K) and used transposed ("T"),
  // B is stored K x N (ldb = K) and used as is ("N"): the "TN" layout every cuBLASLt type supports.
  std::vector<uint16_t> a(k * m), b(k * n), d(m * n);
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);  // random, never zeros
  for (auto& x : a) x = to_bf16(uniform(rng));
  for (auto& x : b) x = to_bf16(uniform(rng));

  void *d_a, *d_b, *d_d, *workspace;
  const size_t workspace_bytes = 32u << 20;  // 32 MiB: the size cuBLAS recommends for Hopper
  CHECK_CUDA(cudaMalloc(&d_a, a.size() * sizeof(uint16_t)));
  CHECK_CUDA(cudaMalloc(&d_b, b.size() * sizeof(uint16_t)));
  CHECK_CUDA(cudaMalloc(&d_d, d.size() * sizeof(uint16_t)));
  CHECK_CUDA(cudaMalloc(&workspace, workspace_bytes));
  CHECK_CUDA(cudaMemcpy(d_a, a.data(), a.size() * sizeof(uint16_t), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_b, b.data(), b.size() * sizeof(uint16_t), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(d_d, 0xFF, d.size() * sizeof(uint16_t)));  // poison: bf16 NaN everywhere

  cublasLtHandle_t handle;
  CHECK_CUBLAS(cublasLtCreate(&handle));

  // 1. The operation: accumulate in FP32, alpha and beta are FP32, A transposed.
  cublasLtMatmulDesc_t op;
  CHECK_CUBLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a));
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b));

  // 2. The layouts: element type, rows and columns as stored, leading dimension.
  cublasLtMatrixLayout_t a_layout, b_layout, d_layout;
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&a_layout, CUDA_R_16BF, k, m, k));
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&b_layout, CUDA_R_16BF, k, n, k));
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&d_layout, CUDA_R_16BF, m, n, m));  // C and D share it

  // 3. Algorithm selection: ask the heuristic for the best algorithm that fits the workspace.
  cublasLtMatmulPreference_t pref;
  CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes, sizeof workspace_bytes));
  cublasLtMatmulHeuristicResult_t heuristic = {};
  int found = 0;
  CHECK_CUBLAS(cublasLtMatmulAlgoGetHeuristic(handle, op, a_layout, b_layout, d_layout, d_layout, pref, 1,
                                              &heuristic, &found));
  if (found == 0) {
    std::fprintf(stderr, "cublasLtMatmulAlgoGetHeuristic found no algorithm\n");
    return 1;
  }

  // 4. The product, D = alpha * op(A) op(B) + beta * C, with beta = 0 and C = D.
  const float alpha = 1.0f, beta = 0.0f;
  auto matmul = [&] {
    CHECK_CUBLAS(cublasLtMatmul(handle, op, &alpha, d_a, a_layout, d_b, b_layout, &beta, d_d, d_layout, d_d,
                                d_layout, &heuristic.algo, workspace, heuristic.workspaceSize, 0));
  };
  matmul();
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(d.data(), d_d, d.size() * sizeof(uint16_t), cudaMemcpyDeviceToHost));

  // 5. Check against the host: the exact product of the bf16 inputs (in double), element by element, with a
  // bound for FP32 accumulation over K terms plus the final rounding to bf16. Large sizes check a sample.
  const int64_t total = m * n, step = std::max<int64_t>(1, total / 65536);
  int64_t checked = 0, over = 0;
  double max_abs = 0.0, worst = 0.0;
  for (int64_t idx = 0; idx < total; idx += step, ++checked) {
    const int64_t i = idx % m, j = idx / m;  // column-major position of D[i, j]
    double exact = 0.0, magnitude = 0.0;
    for (int64_t p = 0; p < k; ++p) {
      const double prod = double(from_bf16(a[i * k + p])) * double(from_bf16(b[j * k + p]));
      exact += prod;
      magnitude += std::fabs(prod);
    }
    const double got = from_bf16(d[idx]);
    const double bound = std::ldexp(std::fabs(exact), -8) + double(k) * std::ldexp(magnitude, -23);
    const double err = std::fabs(got - exact);  // a NaN left by the poison fails the test below
    if (!(err <= bound)) ++over;
    max_abs = std::max(max_abs, err);
    worst = std::max(worst, err / bound);
  }

  // 6. Time it with CUDA events, one pair per call, after warm-up calls.
  for (int w = 0; w < 5; ++w) matmul();
  std::vector<cudaEvent_t> start(timed), stop(timed);
  for (int t = 0; t < timed; ++t) {
    CHECK_CUDA(cudaEventCreate(&start[t]));
    CHECK_CUDA(cudaEventCreate(&stop[t]));
  }
  for (int t = 0; t < timed; ++t) {
    CHECK_CUDA(cudaEventRecord(start[t]));
    matmul();
    CHECK_CUDA(cudaEventRecord(stop[t]));
  }
  CHECK_CUDA(cudaEventSynchronize(stop[timed - 1]));
  std::vector<float> ms(timed);
  for (int t = 0; t < timed; ++t) CHECK_CUDA(cudaEventElapsedTime(&ms[t], start[t], stop[t]));
  std::sort(ms.begin(), ms.end());
  const double median_ms = ms[timed / 2];

  std::printf("cuBLASLt bf16 GEMM: D = A^T B, M=%lld N=%lld K=%lld, FP32 accumulation\n", (long long)m,
              (long long)n, (long long)k);
  std::printf("cublasLt version: %zu\n", cublasLtGetVersion());
  std::printf("heuristic: %d algorithm returned, workspace %zu of %zu bytes\n", found, heuristic.workspaceSize,
              workspace_bytes);
  std::printf("checked %lld of %lld elements against the FP64 product of the bf16 inputs\n", (long long)checked,
              (long long)total);
  std::printf("max abs error %.3e, largest error / bound %.3f, elements over the bound: %lld\n", max_abs, worst,
              (long long)over);
  std::printf("median %.4f ms over %d calls (CUDA events): %.1f TFLOP/s\n", median_ms, timed,
              2.0 * m * n * k / (median_ms * 1e-3) / 1e12);

  for (int t = 0; t < timed; ++t) {
    CHECK_CUDA(cudaEventDestroy(start[t]));
    CHECK_CUDA(cudaEventDestroy(stop[t]));
  }
  CHECK_CUBLAS(cublasLtMatmulPreferenceDestroy(pref));
  CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(d_layout));
  CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(b_layout));
  CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(a_layout));
  CHECK_CUBLAS(cublasLtMatmulDescDestroy(op));
  CHECK_CUBLAS(cublasLtDestroy(handle));
  CHECK_CUDA(cudaFree(workspace));
  CHECK_CUDA(cudaFree(d_d));
  CHECK_CUDA(cudaFree(d_b));
  CHECK_CUDA(cudaFree(d_a));
  std::printf(over == 0 ? "PASS\n" : "FAIL\n");
  return over == 0 ? 0 : 1;
}
// --8<-- [end:example]

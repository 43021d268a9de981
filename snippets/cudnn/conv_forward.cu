// A 2-D convolution through cuDNN's descriptor API, checked element by element against a host loop.
//
// Build and run (CUDA toolkit and cuDNN 9; the plain -lcudnn finds the system's cuDNN):
//   nvcc -O2 -std=c++17 snippets/cudnn/conv_forward.cu -o conv_forward -lcudnn
//   ./conv_forward                       # the checked example: fp32, groups, dilation, both modes, four math types
//   ./conv_forward NAME:N,C,H,W,K,R,S,PAD,STRIDE,DTYPE,LAYOUT ...   # time layers (DTYPE fp16|bf16|fp32, LAYOUT nchw|nhwc)
//
// The file is host code only (no kernels), so a plain C++ compiler can check it too:
//   g++ -std=c++17 -fsyntax-only -x c++ -I<cuda include> -I<cudnn include> snippets/cudnn/conv_forward.cu
//
// API names and arguments follow the cuDNN 9 headers (cudnn_ops.h, cudnn_cnn.h) and NVIDIA's cuDNN API reference
// (https://docs.nvidia.com/deeplearning/cudnn/latest/api/), checked 2026-11-23.

// --8<-- [start:example]
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// Every CUDA and cuDNN call is checked: a failure stops the program with the call, its line and cuDNN's message.
#define CHECK_CUDA(call)                                                                             \
  do {                                                                                               \
    cudaError_t err_ = (call);                                                                       \
    if (err_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                                  \
    }                                                                                                \
  } while (0)
#define CHECK_CUDNN(call)                                                                                \
  do {                                                                                                   \
    cudnnStatus_t st_ = (call);                                                                          \
    if (st_ != CUDNN_STATUS_SUCCESS) {                                                                   \
      char msg_[512];                                                                                    \
      cudnnGetLastErrorString(msg_, sizeof msg_);                                                        \
      std::fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, cudnnGetErrorString(st_), \
                   msg_);                                                                                \
      std::exit(1);                                                                                      \
    }                                                                                                    \
  } while (0)

static const char* ALGO_NAMES[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                                   "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
static const char* MATH_NAMES[] = {"DEFAULT_MATH", "TENSOR_OP_MATH", "TENSOR_OP_MATH_ALLOW_CONVERSION", "FMA_MATH"};

// One convolution problem: sizes in logical NCHW order, whatever the layout in memory.
struct Problem {
  std::string name = "example";
  int n = 2, c = 6, h = 11, w = 9;  // input
  int k = 4, r = 3, s = 3;          // filter: K output channels of C/groups x R x S
  int pad = 1, stride = 2, dilation = 2, groups = 2;
  std::string dtype = "fp32", layout = "nchw";
  cudnnMathType_t math = CUDNN_TENSOR_OP_MATH;  // for timed layers
  int ho() const { return (h + 2 * pad - ((r - 1) * dilation + 1)) / stride + 1; }
  int wo() const { return (w + 2 * pad - ((s - 1) * dilation + 1)) / stride + 1; }
};

static cudnnDataType_t data_type(const std::string& t) {
  if (t == "fp16") return CUDNN_DATA_HALF;
  if (t == "bf16") return CUDNN_DATA_BFLOAT16;
  return CUDNN_DATA_FLOAT;
}
static size_t elem_bytes(const std::string& t) { return t == "fp32" ? 4 : 2; }

// Values are stored in the problem's type; the host keeps float copies of exactly the stored values.
static void store(const std::string& t, float x, void* base, size_t i) {
  if (t == "fp16") static_cast<__half*>(base)[i] = __float2half_rn(x);
  else if (t == "bf16") static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(x);
  else static_cast<float*>(base)[i] = x;
}
static float load(const std::string& t, const void* base, size_t i) {
  if (t == "fp16") return __half2float(static_cast<const __half*>(base)[i]);
  if (t == "bf16") return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
  return static_cast<const float*>(base)[i];
}

// Offset of logical element (a, b, y, x) of a tensor with dims (A, B, Y, X): NCHW or NHWC packed strides.
static size_t offset(bool nhwc, int B, int Y, int X, int a, int b, int y, int x) {
  return nhwc ? ((size_t(a) * Y + y) * X + x) * B + b : ((size_t(a) * B + b) * Y + y) * X + x;
}

// The host reference of one output element, in double: cross-correlation, or convolution (filter flipped).
static void reference(const Problem& p, bool nhwc, bool flip, const std::vector<float>& x, const std::vector<float>& wt,
                      int n, int k, int oy, int ox, double* value, double* magnitude) {
  const int cg = p.c / p.groups, kg = p.k / p.groups, g = k / kg;
  double sum = 0, mag = 0;
  for (int ci = 0; ci < cg; ++ci)
    for (int i = 0; i < p.r; ++i)
      for (int j = 0; j < p.s; ++j) {
        int iy = oy * p.stride - p.pad + i * p.dilation, ix = ox * p.stride - p.pad + j * p.dilation;
        if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;  // zero padding
        int fi = flip ? p.r - 1 - i : i, fj = flip ? p.s - 1 - j : j;
        double a = x[offset(nhwc, p.c, p.h, p.w, n, g * cg + ci, iy, ix)];
        double b = wt[offset(nhwc, cg, p.r, p.s, k, ci, fi, fj)];
        sum += a * b;
        mag += std::fabs(a * b);
      }
  *value = sum;
  *magnitude = mag;
}

struct Result {
  cudnnConvolutionFwdAlgo_t algo;
  size_t workspace;
  float ms;        // median of single calls between two CUDA events: the host's time inside the call included
  float graph_ms;  // per call, from a CUDA graph of GRAPH_CALLS calls: the GPU's time alone (-1: not captured)
  float host_us;   // host time per call, calls issued back to back
  std::vector<float> y;
  std::string failure;  // why no algorithm ran, if none did
};

static const int GRAPH_CALLS = 20;

// Describe, choose an algorithm with cudnnFindConvolutionForwardAlgorithm, run it; time it when reps > 0.
static Result run(cudnnHandle_t handle, cudaStream_t stream, const Problem& p, cudnnConvolutionMode_t mode,
                  cudnnMathType_t math, const void* dx, const void* dw, void* dy, bool list_algorithms, int reps) {
  const cudnnDataType_t type = data_type(p.dtype);
  const cudnnTensorFormat_t format = p.layout == "nhwc" ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  cudnnTensorDescriptor_t xd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&xd));
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&yd));
  CHECK_CUDNN(cudnnCreateFilterDescriptor(&wd));
  CHECK_CUDNN(cudnnCreateConvolutionDescriptor(&cd));
  // Dims are always given as N, C, H, W; the format only chooses the strides.
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(xd, format, type, p.n, p.c, p.h, p.w));
  CHECK_CUDNN(cudnnSetFilter4dDescriptor(wd, type, format, p.k, p.c / p.groups, p.r, p.s));
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;  // accumulate in fp32 for every storage type
  CHECK_CUDNN(cudnnSetConvolution2dDescriptor(cd, p.pad, p.pad, p.stride, p.stride, p.dilation, p.dilation, mode,
                                              compute));
  CHECK_CUDNN(cudnnSetConvolutionGroupCount(cd, p.groups));
  CHECK_CUDNN(cudnnSetConvolutionMathType(cd, math));
  int on, oc, oh, ow;
  CHECK_CUDNN(cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &oc, &oh, &ow));
  if (list_algorithms)
    std::printf("output dims from cuDNN: %d %d %d %d, from the formula: %d %d %d %d\n", on, oc, oh, ow, p.n, p.k,
                p.ho(), p.wo());
  if (on != p.n || oc != p.k || oh != p.ho() || ow != p.wo()) {
    std::fprintf(stderr, "cuDNN's output dims differ from the formula\n");
    std::exit(1);
  }
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(yd, format, type, on, oc, oh, ow));

  // Find runs every algorithm that supports the problem and returns them fastest first.
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  Result out{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 0, 0.0f, -1.0f, 0.0f, {}, ""};
  const cudnnStatus_t searched = cudnnFindConvolutionForwardAlgorithm(handle, xd, wd, cd, yd,
                                                                      CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf);
  if (searched != CUDNN_STATUS_SUCCESS) found = 0, out.failure = cudnnGetErrorString(searched);
  int best = -1;
  for (int i = 0; i < found; ++i) {
    if (list_algorithms)
      std::printf("  algorithm %-21s %-22s time %8.4f ms workspace %zu bytes math %s\n", ALGO_NAMES[perf[i].algo],
                  cudnnGetErrorString(perf[i].status), perf[i].status == CUDNN_STATUS_SUCCESS ? perf[i].time : 0.0f,
                  perf[i].memory, MATH_NAMES[perf[i].mathType]);
    if (best < 0 && perf[i].status == CUDNN_STATUS_SUCCESS) best = i;
  }
  if (best < 0) {  // the descriptors are valid, but no algorithm of this cuDNN supports the problem
    if (out.failure.empty()) out.failure = "no algorithm returned CUDNN_STATUS_SUCCESS";
    CHECK_CUDNN(cudnnDestroyConvolutionDescriptor(cd));
    CHECK_CUDNN(cudnnDestroyFilterDescriptor(wd));
    CHECK_CUDNN(cudnnDestroyTensorDescriptor(yd));
    CHECK_CUDNN(cudnnDestroyTensorDescriptor(xd));
    return out;
  }
  out.algo = perf[best].algo;
  CHECK_CUDNN(cudnnGetConvolutionForwardWorkspaceSize(handle, xd, wd, cd, yd, out.algo, &out.workspace));
  void* ws = nullptr;
  if (out.workspace) CHECK_CUDA(cudaMalloc(&ws, out.workspace));
  const float alpha = 1.0f, beta = 0.0f;  // y = alpha * conv(x, w) + beta * y
  auto forward = [&] {
    CHECK_CUDNN(cudnnConvolutionForward(handle, &alpha, xd, dx, wd, dw, cd, out.algo, ws, out.workspace, &beta, yd,
                                        dy));
  };
  forward();
  CHECK_CUDA(cudaStreamSynchronize(stream));
  if (reps > 0) {  // a median of CUDA-event times, after warm-up calls
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    for (int i = 0; i < 5; ++i) forward();
    std::vector<float> times(reps);
    for (int i = 0; i < reps; ++i) {
      CHECK_CUDA(cudaEventRecord(start, stream));
      forward();
      CHECK_CUDA(cudaEventRecord(stop, stream));
      CHECK_CUDA(cudaEventSynchronize(stop));
      CHECK_CUDA(cudaEventElapsedTime(&times[i], start, stop));
    }
    std::sort(times.begin(), times.end());
    out.ms = times[reps / 2];
    // The host's cost of a call: issue many back to back, wait once.
    const auto host0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) forward();
    const auto host1 = std::chrono::steady_clock::now();
    CHECK_CUDA(cudaStreamSynchronize(stream));
    out.host_us = std::chrono::duration<float, std::micro>(host1 - host0).count() / reps;
    // The GPU's time alone: capture GRAPH_CALLS calls into a CUDA graph and time its replays.
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    bool captured = cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) == cudaSuccess;
    cudnnStatus_t during = CUDNN_STATUS_SUCCESS;
    for (int i = 0; captured && i < GRAPH_CALLS && during == CUDNN_STATUS_SUCCESS; ++i)
      during = cudnnConvolutionForward(handle, &alpha, xd, dx, wd, dw, cd, out.algo, ws, out.workspace, &beta, yd, dy);
    if (captured) captured = cudaStreamEndCapture(stream, &graph) == cudaSuccess && during == CUDNN_STATUS_SUCCESS;
    if (captured) captured = cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
    if (captured) {
      CHECK_CUDA(cudaGraphLaunch(exec, stream));  // warm-up replay
      for (int i = 0; i < 10; ++i) {
        CHECK_CUDA(cudaEventRecord(start, stream));
        CHECK_CUDA(cudaGraphLaunch(exec, stream));
        CHECK_CUDA(cudaEventRecord(stop, stream));
        CHECK_CUDA(cudaEventSynchronize(stop));
        CHECK_CUDA(cudaEventElapsedTime(&times[i], start, stop));
      }
      std::sort(times.begin(), times.begin() + 10);
      out.graph_ms = times[5] / GRAPH_CALLS;
    } else {
      (void)cudaGetLastError();  // a failed capture leaves an error behind; clear it
      std::printf("  graph capture failed: %s\n", cudnnGetErrorString(during));
    }
    if (exec) CHECK_CUDA(cudaGraphExecDestroy(exec));
    if (graph) CHECK_CUDA(cudaGraphDestroy(graph));
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
  }
  const size_t count = size_t(on) * oc * oh * ow;
  std::vector<unsigned char> raw(count * elem_bytes(p.dtype));
  CHECK_CUDA(cudaMemcpy(raw.data(), dy, raw.size(), cudaMemcpyDeviceToHost));
  out.y.resize(count);
  for (size_t i = 0; i < count; ++i) out.y[i] = load(p.dtype, raw.data(), i);
  if (ws) CHECK_CUDA(cudaFree(ws));
  CHECK_CUDNN(cudnnDestroyConvolutionDescriptor(cd));
  CHECK_CUDNN(cudnnDestroyFilterDescriptor(wd));
  CHECK_CUDNN(cudnnDestroyTensorDescriptor(yd));
  CHECK_CUDNN(cudnnDestroyTensorDescriptor(xd));
  return out;
}

// Largest |y - reference| / sum|x·w| over every step-th output: error relative to the size of the terms.
static double worst_error(const Problem& p, bool flip, const std::vector<float>& x, const std::vector<float>& wt,
                          const std::vector<float>& y, size_t step, size_t* checked) {
  const bool nhwc = p.layout == "nhwc";
  const int ho = p.ho(), wo = p.wo();
  double worst = 0;
  *checked = 0;
  for (size_t idx = 0; idx < y.size(); idx += step) {
    size_t rest = idx;
    int n, k, oy, ox;
    if (nhwc) {
      k = rest % p.k, rest /= p.k, ox = rest % wo, rest /= wo, oy = rest % ho, n = int(rest / ho);
    } else {
      ox = rest % wo, rest /= wo, oy = rest % ho, rest /= ho, k = rest % p.k, n = int(rest / p.k);
    }
    double value, magnitude;
    reference(p, nhwc, flip, x, wt, n, k, oy, ox, &value, &magnitude);
    worst = std::max(worst, std::fabs(y[idx] - value) / std::max(magnitude, 1e-30));
    ++*checked;
  }
  return worst;
}

static void dump(const std::string& path, const std::vector<float>& values) {
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file || std::fwrite(values.data(), sizeof(float), values.size(), file) != values.size()) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::fclose(file);
}

// Impossible descriptors: what cuDNN answers (the status is the point, so these calls print it instead of exiting).
static void probe(const char* what, cudnnStatus_t st) {
  char msg[512] = "";
  if (st != CUDNN_STATUS_SUCCESS) cudnnGetLastErrorString(msg, sizeof msg);
  for (char* c = msg; *c; ++c)
    if (*c == '\n' || *c == '\r') *c = ' ';
  std::printf("probe %s: %s%s%.200s\n", what, cudnnGetErrorString(st), *msg ? " | " : "", msg);
}

static void probes(cudnnHandle_t handle) {
  cudnnTensorDescriptor_t t, y;
  cudnnFilterDescriptor_t f;
  cudnnConvolutionDescriptor_t cd;
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&t));
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&y));
  CHECK_CUDNN(cudnnCreateFilterDescriptor(&f));
  CHECK_CUDNN(cudnnCreateConvolutionDescriptor(&cd));
  const int dims[9] = {2, 2, 2, 2, 2, 2, 2, 2, 2};
  const int packed[9] = {256, 128, 64, 32, 16, 8, 4, 2, 1};
  probe("nbDims=2", cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 2, dims, packed + 7));
  probe("nbDims=3", cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 3, dims, packed + 6));
  probe("nbDims=8", cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 8, dims, packed + 1));
  probe("nbDims=9", cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 9, dims, packed));
  const int d4[4] = {1, 2, 3, 4}, negative[4] = {24, 12, 4, -1}, zero[4] = {1, 0, 3, 4};
  const int d4s[4] = {24, 12, 4, 1}, overlap[4] = {12, 6, 2, 1};  // H and W overlap: hStride 2 < W * wStride = 4
  probe("negative stride", cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 4, d4, negative));
  probe("zero dimension", cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 4, zero, d4s));
  probe("overlapping strides (set)", cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 4, d4, overlap));
  probe("negative padding", cudnnSetConvolution2dDescriptor(cd, -1, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                                             CUDNN_DATA_FLOAT));
  probe("zero stride", cudnnSetConvolution2dDescriptor(cd, 0, 0, 0, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                                        CUDNN_DATA_FLOAT));
  probe("zero dilation", cudnnSetConvolution2dDescriptor(cd, 0, 0, 1, 1, 0, 1, CUDNN_CROSS_CORRELATION,
                                                          CUDNN_DATA_FLOAT));
  // 6 input channels in 4 groups: the filter's 1 channel per group times 4 groups is not 6.
  int n, c, h, w;
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 6, 8, 8));
  CHECK_CUDNN(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 1, 3, 3));
  CHECK_CUDNN(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CHECK_CUDNN(cudnnSetConvolutionGroupCount(cd, 4));
  probe("6 channels in 4 groups", cudnnGetConvolution2dForwardOutputDim(cd, t, f, &n, &c, &h, &w));
  // A 5x5 filter on a 2x2 input without padding: the formula gives (2 + 0 - 5) / 1 + 1 = -2, no output at all.
  CHECK_CUDNN(cudnnSetConvolutionGroupCount(cd, 1));
  CHECK_CUDNN(cudnnSetConvolution2dDescriptor(cd, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 2, 2));
  CHECK_CUDNN(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, 5, 5));
  probe("5x5 filter on 2x2 input", cudnnGetConvolution2dForwardOutputDim(cd, t, f, &n, &c, &h, &w));
  // An output whose H and W overlap, for a valid 1x1x4x4 input and 3x3 filter (output 1x1x2x2).
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 4, 4));
  CHECK_CUDNN(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, 3, 3));
  const int yd[4] = {1, 1, 2, 2}, ys[4] = {2, 2, 1, 1};  // hStride 1 < W * wStride = 2
  CHECK_CUDNN(cudnnSetTensorNdDescriptor(y, CUDNN_DATA_FLOAT, 4, yd, ys));
  void *dx, *dw, *dy;
  CHECK_CUDA(cudaMalloc(&dx, 16 * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dw, 9 * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dy, 4 * sizeof(float)));
  CHECK_CUDA(cudaMemset(dx, 0, 16 * sizeof(float)));
  CHECK_CUDA(cudaMemset(dw, 0, 9 * sizeof(float)));
  const float alpha = 1.0f, beta = 0.0f;
  probe("overlapping output (forward)", cudnnConvolutionForward(handle, &alpha, t, dx, f, dw, cd,
                                                                 CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0,
                                                                 &beta, y, dy));
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dw));
  CHECK_CUDA(cudaFree(dy));
  CHECK_CUDNN(cudnnDestroyConvolutionDescriptor(cd));
  CHECK_CUDNN(cudnnDestroyFilterDescriptor(f));
  CHECK_CUDNN(cudnnDestroyTensorDescriptor(y));
  CHECK_CUDNN(cudnnDestroyTensorDescriptor(t));
}

int main(int argc, char** argv) {
  std::vector<Problem> problems;
  for (int a = 1; a < argc; ++a) {  // NAME:N,C,H,W,K,R,S,PAD,STRIDE,DTYPE,LAYOUT[,MATH]
    Problem p;
    char name[64], dtype[8], layout[8], math[24] = "TENSOR_OP_MATH";
    int got = std::sscanf(argv[a], "%63[^:]:%d,%d,%d,%d,%d,%d,%d,%d,%d,%7[^,],%7[^,],%23s", name, &p.n, &p.c, &p.h,
                          &p.w, &p.k, &p.r, &p.s, &p.pad, &p.stride, dtype, layout, math);
    int m = 0;
    while (m < 4 && std::strcmp(math, MATH_NAMES[m]) != 0) ++m;
    if ((got != 12 && got != 13) || m == 4) {
      std::fprintf(stderr, "cannot read %s: want NAME:N,C,H,W,K,R,S,PAD,STRIDE,DTYPE,LAYOUT[,MATH]\n", argv[a]);
      return 2;
    }
    p.name = name, p.dtype = dtype, p.layout = layout, p.dilation = 1, p.groups = 1;
    p.math = static_cast<cudnnMathType_t>(m);
    problems.push_back(p);
  }
  const bool example = problems.empty();
  if (example) problems.push_back(Problem{});

  cudnnHandle_t handle;
  CHECK_CUDNN(cudnnCreate(&handle));
  cudaStream_t stream;  // every call goes to this stream, so its calls can be captured into a CUDA graph
  CHECK_CUDA(cudaStreamCreate(&stream));
  CHECK_CUDNN(cudnnSetStream(handle, stream));
  std::printf("cuDNN %zu (header %d), CUDA runtime %zu\n", cudnnGetVersion(), CUDNN_VERSION, cudnnGetCudartVersion());
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);  // random, never all zeros
  bool pass = true;
  for (const Problem& p : problems) {
    if (p.c % p.groups || p.k % p.groups || p.ho() < 1 || p.wo() < 1) {
      std::fprintf(stderr, "%s: channels must divide by groups and the output must be at least 1x1\n", p.name.c_str());
      return 2;
    }
    const size_t nx = size_t(p.n) * p.c * p.h * p.w, nw = size_t(p.k) * (p.c / p.groups) * p.r * p.s;
    const size_t ny = size_t(p.n) * p.k * p.ho() * p.wo(), eb = elem_bytes(p.dtype);
    std::vector<unsigned char> hx(nx * eb), hw(nw * eb);
    std::vector<float> x(nx), wt(nw);
    for (size_t i = 0; i < nx; ++i) store(p.dtype, uniform(rng), hx.data(), i), x[i] = load(p.dtype, hx.data(), i);
    for (size_t i = 0; i < nw; ++i) store(p.dtype, uniform(rng), hw.data(), i), wt[i] = load(p.dtype, hw.data(), i);
    void *dx, *dw, *dy;
    CHECK_CUDA(cudaMalloc(&dx, hx.size()));
    CHECK_CUDA(cudaMalloc(&dw, hw.size()));
    CHECK_CUDA(cudaMalloc(&dy, ny * eb));
    CHECK_CUDA(cudaMemcpy(dx, hx.data(), hx.size(), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dw, hw.data(), hw.size(), cudaMemcpyHostToDevice));
    std::printf("%s: x %dx%dx%dx%d w %dx%dx%dx%d pad %d stride %d dilation %d groups %d %s %s -> y %dx%dx%dx%d\n",
                p.name.c_str(), p.n, p.c, p.h, p.w, p.k, p.c / p.groups, p.r, p.s, p.pad, p.stride, p.dilation,
                p.groups, p.dtype.c_str(), p.layout.c_str(), p.n, p.k, p.ho(), p.wo());
    size_t checked = 0;
    if (example) {
      // Cross-correlation (what deep-learning frameworks call convolution) and true convolution, in FP32 FMA math.
      Result cc = run(handle, stream, p, CUDNN_CROSS_CORRELATION, CUDNN_FMA_MATH, dx, dw, dy, true, 0);
      Result cv = run(handle, stream, p, CUDNN_CONVOLUTION, CUDNN_FMA_MATH, dx, dw, dy, false, 0);
      if (!cc.failure.empty() || !cv.failure.empty()) {
        std::fprintf(stderr, "the example found no algorithm: %s %s\n", cc.failure.c_str(), cv.failure.c_str());
        return 1;
      }
      double e_cc = worst_error(p, false, x, wt, cc.y, 1, &checked);
      double e_cv = worst_error(p, true, x, wt, cv.y, 1, &checked);
      double apart = 0;
      for (size_t i = 0; i < ny; ++i) apart = std::max(apart, double(std::fabs(cc.y[i] - cv.y[i])));
      std::printf("mode CROSS_CORRELATION algo %s: error vs host %.2e over %zu outputs\n", ALGO_NAMES[cc.algo], e_cc,
                  checked);
      std::printf("mode CONVOLUTION algo %s: error vs host (flipped filter) %.2e over %zu outputs\n",
                  ALGO_NAMES[cv.algo], e_cv, checked);
      std::printf("largest difference between the two modes: %.4f\n", apart);
      if (const char* dir = std::getenv("CONV_FORWARD_DUMP")) {  // raw float32 files, for a check against torch
        dump(std::string(dir) + "/x.f32", x);
        dump(std::string(dir) + "/w.f32", wt);
        dump(std::string(dir) + "/y_cross_correlation.f32", cc.y);
        dump(std::string(dir) + "/y_convolution.f32", cv.y);
      }
      pass = pass && e_cc < 1e-5 && e_cv < 1e-5 && apart > 0.1;
      // The math type decides whether FP32 data may go through tensor cores (TF32: 10 mantissa bits).
      for (cudnnMathType_t math : {CUDNN_DEFAULT_MATH, CUDNN_TENSOR_OP_MATH, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION,
                                   CUDNN_FMA_MATH}) {
        Result m = run(handle, stream, p, CUDNN_CROSS_CORRELATION, math, dx, dw, dy, false, 0);
        if (!m.failure.empty()) {
          std::printf("math %s: %s\n", MATH_NAMES[math], m.failure.c_str());
          pass = false;
          continue;
        }
        double e = worst_error(p, false, x, wt, m.y, 1, &checked);
        std::printf("math %s algo %s: error vs host %.2e\n", MATH_NAMES[math], ALGO_NAMES[m.algo], e);
        pass = pass && e < 4e-3;
      }
    } else {
      Result t = run(handle, stream, p, CUDNN_CROSS_CORRELATION, p.math, dx, dw, dy, true, 50);
      if (!t.failure.empty()) {  // reported, not fatal: which layouts a cuDNN supports is what a reader asks
        std::printf("layer %s %s %s %s: unsupported: %s\n", p.name.c_str(), p.dtype.c_str(), p.layout.c_str(),
                    MATH_NAMES[p.math], t.failure.c_str());
        CHECK_CUDA(cudaFree(dx));
        CHECK_CUDA(cudaFree(dw));
        CHECK_CUDA(cudaFree(dy));
        continue;
      }
      // Relative to the sum of |terms|: the output's rounding, or TF32's for FP32 data where tensor cores may run.
      const double bound = p.dtype == "bf16" ? 1.0 / 128 : p.dtype == "fp16" ? 1.0 / 1024 : 4e-3;
      double e = worst_error(p, false, x, wt, t.y, std::max<size_t>(1, ny / 4096), &checked);
      const double flops = 2.0 * ny * (p.c / p.groups) * p.r * p.s;
      std::printf("layer %s %s %s %s: algo %s workspace %zu median %.4f ms graph %.4f ms host %.1f us %.1f TFLOP/s "
                  "error %.2e over %zu outputs\n", p.name.c_str(), p.dtype.c_str(), p.layout.c_str(),
                  MATH_NAMES[p.math], ALGO_NAMES[t.algo], t.workspace, t.ms, t.graph_ms, t.host_us,
                  flops / ((t.graph_ms > 0 ? t.graph_ms : t.ms) * 1e-3) / 1e12, e, checked);
      pass = pass && e < bound;
    }
    CHECK_CUDA(cudaFree(dx));
    CHECK_CUDA(cudaFree(dw));
    CHECK_CUDA(cudaFree(dy));
  }
  if (example) probes(handle);
  CHECK_CUDNN(cudnnDestroy(handle));
  CHECK_CUDA(cudaStreamDestroy(stream));
  std::printf(pass ? "PASS\n" : "FAIL\n");
  return pass ? 0 : 1;
}
// --8<-- [end:example]

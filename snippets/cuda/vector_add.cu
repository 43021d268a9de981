// Vector addition, one element per thread, with every CUDA call checked and the result verified on the host.
//
// Build and run (CUDA toolkit):
//   nvcc -O2 -std=c++17 -arch=sm_90 snippets/cuda/vector_add.cu -o vector_add
//   ./vector_add [n]

// --8<-- [start:example]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                                       \
    do {                                                                                  \
        cudaError_t status_ = (call);                                                     \
        if (status_ != cudaSuccess) {                                                     \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,     \
                         cudaGetErrorString(status_));                                    \
            std::exit(EXIT_FAILURE);                                                      \
        }                                                                                 \
    } while (0)

__global__ void vector_add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];  // the last block may stick out past the end
}

int main(int argc, char **argv) {
    int n = argc > 1 ? std::atoi(argv[1]) : 50000;
    size_t bytes = n * sizeof(float);
    std::vector<float> a(n), b(n), c(n);
    for (int i = 0; i < n; ++i) {
        a[i] = std::sin(0.001f * i);  // deterministic, non-zero inputs
        b[i] = std::cos(0.002f * i);
    }
    float *d_a = nullptr, *d_b = nullptr, *d_c = nullptr;
    CHECK(cudaMalloc(&d_a, bytes));
    CHECK(cudaMalloc(&d_b, bytes));
    CHECK(cudaMalloc(&d_c, bytes));
    CHECK(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice));

    int threads = 256;
    int blocks = (n + threads - 1) / threads;  // round up: every element gets a thread
    std::printf("vector add of %d elements: %d blocks of %d threads\n", n, blocks, threads);
    vector_add<<<blocks, threads>>>(d_a, d_b, d_c, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(c.data(), d_c, bytes, cudaMemcpyDeviceToHost));

    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += c[i] != a[i] + b[i];  // one float addition: exact equality
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_c));
    std::printf("mismatches: %d of %d\n", wrong, n);
    std::printf(wrong == 0 ? "Test PASSED\n" : "Test FAILED\n");
    return wrong == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
// --8<-- [end:example]

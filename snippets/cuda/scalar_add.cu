// Scalar addition on the GPU: copy two ints to the device, add them in a kernel, copy the sum back.
//
// Build and run (CUDA toolkit):
//   nvcc -O2 -std=c++17 -arch=sm_90 snippets/cuda/scalar_add.cu -o scalar_add
//   ./scalar_add

// --8<-- [start:example]
#include <cstdio>
#include <cstdlib>

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

// a, b and c point to device memory; one thread does the addition.
__global__ void add(const int *a, const int *b, int *c) { *c = *a + *b; }

int main() {
    int a = 2, b = 7, c = 0;
    int *d_a = nullptr, *d_b = nullptr, *d_c = nullptr;
    CHECK(cudaMalloc(&d_a, sizeof(int)));
    CHECK(cudaMalloc(&d_b, sizeof(int)));
    CHECK(cudaMalloc(&d_c, sizeof(int)));
    CHECK(cudaMemcpy(d_a, &a, sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, &b, sizeof(int), cudaMemcpyHostToDevice));
    add<<<1, 1>>>(d_a, d_b, d_c);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(&c, d_c, sizeof(int), cudaMemcpyDeviceToHost));  // waits for the kernel
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_c));
    std::printf("%d + %d = %d\n", a, b, c);
    return c == a + b ? EXIT_SUCCESS : EXIT_FAILURE;
}
// --8<-- [end:example]

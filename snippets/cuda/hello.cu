// Hello from the CPU, then from 2 blocks of 4 GPU threads, each printing its indices.
//
// Build and run (CUDA toolkit):
//   nvcc -O2 -std=c++17 -arch=sm_90 snippets/cuda/hello.cu -o hello
//   ./hello

// --8<-- [start:example]
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

// Every CUDA runtime call returns a status: stop at the first one that is not cudaSuccess.
#define CHECK(call)                                                                       \
    do {                                                                                  \
        cudaError_t status_ = (call);                                                     \
        if (status_ != cudaSuccess) {                                                     \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,     \
                         cudaGetErrorString(status_));                                    \
            std::exit(EXIT_FAILURE);                                                      \
        }                                                                                 \
    } while (0)

__global__ void hello_from_gpu() {
    int global = blockIdx.x * blockDim.x + threadIdx.x;
    printf("Hello from GPU: block %d, thread %d, global index %d\n", blockIdx.x, threadIdx.x, global);
}

int main() {
    std::printf("Hello from CPU\n");
    hello_from_gpu<<<2, 4>>>();         // a launch returns no status ...
    CHECK(cudaGetLastError());          // ... so ask for launch errors (a bad configuration, say)
    CHECK(cudaDeviceSynchronize());     // wait for the kernel: its printf output is flushed here
    return 0;
}
// --8<-- [end:example]

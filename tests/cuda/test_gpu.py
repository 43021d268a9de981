"""On a CUDA GPU: the chapter's numba and Triton kernels at sizes the simulator cannot reach, and a launch beyond a
kernel's ``__launch_bounds__`` (which the occupancy API still answers for) failing."""

from __future__ import annotations

# ruff: noqa: N812  (K names the kernels module, as in the benchmark)
import numpy as np
import pytest

from tests.cuda.numba_target import unavailable_reason

pytestmark = pytest.mark.gpu


def _numba_target() -> None:
    """Skip, saying why, where numba-cuda's CUDA target cannot load with this numpy (see tests.cuda.numba_target)."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)


def test_numba_kernels_on_the_gpu() -> None:
    _numba_target()
    from gpukb.cuda import kernels as K

    rng = np.random.default_rng(1)
    a, b = rng.random(1_000_003, dtype=np.float32), rng.random(1_000_003, dtype=np.float32)
    assert np.array_equal(K.vector_add(a, b), a + b)
    x, y = rng.random((300, 501), dtype=np.float32), rng.random((300, 501), dtype=np.float32)
    assert np.array_equal(K.add_2d(x, y), x + y)
    m, k = rng.standard_normal((200, 300), dtype=np.float32), rng.standard_normal((300, 100), dtype=np.float32)
    for tile in (16, 32):
        assert np.abs(K.tiled_matmul(m, k, tile) - m.astype(np.float64) @ k).max() < 1e-3
    ints = rng.integers(1, 100, 1_000_000).astype(np.float32)  # an exact sum in float32 (below 2^24 per partial)
    total = float(ints.sum(dtype=np.int64))
    for method in K.REDUCTIONS:
        assert K.reduce_sum(ints[:100_000], method) == float(ints[:100_000].sum(dtype=np.int64)), method
    # 1024 blocks each add a partial sum to one float32 total near 5e7, where float32 spacing is 4: each atomic
    # add may round by half of that, so the total is within 1024 x 2 of the exact sum.
    assert abs(K.reduce_sum(ints, "warp") - total) <= 1024 * np.spacing(np.float32(total)) / 2
    assert np.array_equal(K.vector_add(a, b, unrolled=True), a + b)
    values = rng.integers(0, 256, 1_000_000).astype(np.int32)
    want = np.bincount(values, minlength=256)
    assert np.array_equal(K.histogram(values, 256, shared=True), want)
    assert np.array_equal(K.histogram(values, 256, shared=False), want)
    f = rng.standard_normal(1000).astype(np.float32)
    assert np.array_equal(K.bits_of(f), f.view(np.uint32))


def test_triton_add_on_the_gpu() -> None:
    import torch

    from gpukb.cuda.triton_kernels import add

    a, b = torch.rand(1_000_003, device="cuda"), torch.rand(1_000_003, device="cuda")
    assert torch.equal(add(a, b), a + b)


def test_a_launch_beyond_launch_bounds_fails_though_the_occupancy_api_answers() -> None:
    cupy = pytest.importorskip("cupy")
    source = 'extern "C" __global__ void __launch_bounds__(256) k(float* x) { x[threadIdx.x] = threadIdx.x; }'
    kernel = cupy.RawModule(code=source).get_function("k")
    assert kernel.attributes["max_threads_per_block"] == 256
    ptr = kernel.kernel.ptr
    blocks = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(ptr, 512, 0)
    print("occupancy API at 512 threads:", blocks)
    assert blocks > 0  # the API does not check the kernel's own block-size limit ...
    x = cupy.zeros(512, dtype=cupy.float32)

    def launch_and_wait() -> None:
        kernel((1,), (512,), (x,))
        cupy.cuda.Device().synchronize()

    with pytest.raises(Exception, match="CUDA_ERROR_INVALID_VALUE") as err:  # ... a launch does (cupy's error type)
        launch_and_wait()
    print("launch at 512 threads:", err.value)
    kernel((1,), (256,), (x,))
    assert float(x[255]) == 255.0


def test_mapped_and_managed_memory_are_read_by_a_kernel() -> None:
    _numba_target()
    from numba import cuda

    from gpukb.cuda import host_memory
    from gpukb.cuda import kernels as K

    x = np.random.default_rng(2).random(1_000_003, dtype=np.float32) + 0.5
    out = cuda.device_array_like(x)
    for allocate in (host_memory.mapped, host_memory.managed):
        buffer = allocate(x.size)
        buffer.host[:] = x
        if buffer.kind == "managed":
            host_memory.prefetch_to_device(buffer)
        K.copy_ilp(4)[K.blocks(x.size, K.THREADS * 4), K.THREADS](buffer.device, out)
        assert np.array_equal(out.copy_to_host(), x), buffer.kind
        buffer.free()
    with pytest.raises(ValueError, match="more than 50% of the"):
        host_memory.managed(host_memory.free_device_bytes())  # float32 elements: four times the free bytes

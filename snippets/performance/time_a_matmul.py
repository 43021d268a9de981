"""Time a matrix product the way the harness does: warm-up, call-by-call timing, the median and its spread.

On a CUDA GPU it uses CUDA events and flushes L2 before each call; without one it times NumPy on the CPU with
the host clock, so the same code runs everywhere.
"""

# --8<-- [start:example]
import numpy as np

from gpukb.measuring.counting import gemm_flops
from gpukb.measuring.stats import summarize
from gpukb.measuring.timing import Budget, EventTimer, HostTimer, L2Flusher, benchmark

try:
    import torch

    on_gpu = torch.cuda.is_available()
except ImportError:
    on_gpu = False

n = 512
rng = np.random.default_rng(0)
a, b = rng.standard_normal((2, n, n), dtype=np.float32)  # random inputs, never zeros

if on_gpu:
    a, b = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    device = torch.cuda.get_device_name(0)
    timer, flush = EventTimer(torch), L2Flusher(torch, torch.cuda.get_device_properties(0).L2_cache_size)
else:
    device, timer, flush = "cpu (no CUDA GPU found)", HostTimer(), None

run = benchmark(lambda: a @ b, timer, Budget(warmup_ms=20, rep_ms=100, min_reps=10), before=flush)
ms = summarize(run.samples)
print(f"device   {device}")
print(f"FLOPs    {gemm_flops(n, n, n):,}")
print(f"calls    {ms.n} timed after {run.warmup_calls} warm-up calls")
print(f"median   {ms.median:.4f} ms (min {ms.min:.4f}, max {ms.max:.4f}, IQR {100 * ms.spread:.1f}%)")
print(f"rate     {gemm_flops(n, n, n) / (ms.median * 1e-3) / 1e9:.1f} GFLOP/s")
# --8<-- [end:example]

"""Read the measured ceilings of a committed H100 run and bound two operations with them."""

# --8<-- [start:example]
from gpukb.measuring.counting import gemm_bytes, gemm_flops
from gpukb.performance.ceilings import measured_ceilings
from gpukb.performance.roofline import attainable, bound, ridge_point

roof = measured_ceilings("performance/h100-sweep")  # a committed record, by id
peak, bandwidth = roof["bf16"] * 1e12, roof["bandwidth"] * 1e9  # FLOP/s and bytes/s
print(f"measured bf16 peak       {roof['bf16']:.1f} TFLOP/s")
print(f"measured bandwidth       {roof['bandwidth']:.0f} GB/s")
print(f"ridge point              {ridge_point(peak, bandwidth):.0f} FLOP/byte")

# A bf16 product of 4096×4096 by 4096×4096, and the same K with only 16 rows (a decode-sized batch).
for m in (4096, 16):
    flops, nbytes = gemm_flops(m, 4096, 4096), gemm_bytes(m, 4096, 4096, a_bytes=2)
    floor = bound(flops, nbytes, peak, bandwidth)
    ceiling = attainable(flops / nbytes, peak, bandwidth) / 1e12
    print(
        f"M={m:<5} intensity {flops / nbytes:7.1f} FLOP/B  floor {floor.time_s * 1e6:8.2f} µs  "
        f"at most {ceiling:6.1f} TFLOP/s  ({floor.limiter}-bound)"
    )
# --8<-- [end:example]

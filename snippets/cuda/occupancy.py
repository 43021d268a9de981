"""Size a launch: active blocks per SM, occupancy and the limiting resource, for a few kernels on Hopper."""

# --8<-- [start:example]
from gpukb.cuda.occupancy import occupancy

# 256 threads, 32 registers per thread, no shared memory, on compute capability 9.0 (H100)
occ = occupancy("9.0", threads=256, registers=32)
print(f"256 threads, 32 regs: {occ.active_blocks} blocks/SM, {occ.occupancy:.0%}, limited by {occ.limiting}")

# Twice the registers: the register file now holds half as many warps
occ = occupancy("9.0", threads=256, registers=64)
print(f"256 threads, 64 regs: {occ.active_blocks} blocks/SM, {occ.occupancy:.0%}, limited by {occ.limiting}")

# 100 KiB of dynamic shared memory per block (needs the opt-in above 48 KiB)
occ = occupancy("9.0", threads=256, registers=32, dynamic_shared=100 * 1024)
print(
    f"+100 KiB shared: {occ.active_blocks} blocks/SM, {occ.occupancy:.0%}, limited by {occ.limiting}, "
    f"{occ.shared_per_block} bytes allocated per block"
)

# A configuration that cannot launch at all
try:
    occupancy("9.0", threads=1024, registers=128)
except ValueError as err:
    print(f"refused: {err}")
# --8<-- [end:example]

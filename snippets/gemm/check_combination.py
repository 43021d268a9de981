"""Ask a GEMM library's type table whether it accepts a combination, and read the answer it gives."""

# --8<-- [start:example]
from gpukb.gemm.types import check, table

# Is A = FP8 (E4M3), B = BF8 (E5M2), D = BF16 supported on an MI300X and on an H100?
for library, arch, a, b in [("hipblaslt", "MI300X", "fp8", "bf8"), ("cublaslt", "H100", "e4m3", "e5m2")]:
    arch_id = table(library).resolve_arch(arch)
    for row in check(library, a=a, b=b, d="bf16", arch=arch):
        print(f"{library} on {arch} ({arch_id}): {row.types()}")
        print(f"  compute {row.compute.enum}, scale {row.scale}, bias {' or '.join(row.bias)}")
        unconfirmed = f"no, the sources do not state {', '.join(row.unconfirmed)}"
        print(f"  layout {row.layout_on(arch_id)}, confirmed: {'yes' if row.confirmed else unconfirmed}")

# A combination the library does not accept raises ValueError; the message says why and what is nearest.
try:
    check("cublaslt", a="e5m2", b="e5m2", d="bf16", arch="H100")
except ValueError as err:
    print(str(err).splitlines()[1])
# --8<-- [end:example]

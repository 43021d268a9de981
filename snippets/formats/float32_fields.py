"""Take FP32 numbers apart into sign, exponent and mantissa, and see the value each stores."""

# --8<-- [start:example]
from gpukb.formats.float32 import float32_fields

for x in [42.5, 0.1, -2.0, 1e-45, 3.5e38]:
    f = float32_fields(x)
    stored = float(f.value) if f.value is not None else f.kind  # Inf and NaN have no finite value
    print(
        f"{x:>8g}  sign={f.sign}  exponent={f.exponent_field:08b}  "
        f"mantissa={f.mantissa_field:023b}  {f.kind:<9}  stored={stored}"
    )
# --8<-- [end:example]

"""Take FP32 numbers apart into sign, exponent and mantissa, and see the value each stores."""

# --8<-- [start:example]
from gpukb.formats.explain import explain

for x in ["42.5", "0.1", "-2", "1e-45", "3.5e38"]:  # decimal strings are read exactly
    e = explain(x, "fp32")
    d = e.stored
    print(
        f"{x:>6}  sign={d.sign}  exponent={d.exponent_field:08b}  mantissa={d.mantissa_field:023b}  "
        f"{e.outcome:<18}  stored={d.as_float()!r}"
    )
# --8<-- [end:example]

"""A float's bits: reinterpret the same 4 bytes as an unsigned int, on the host (numpy, struct) and on the device.

Without a GPU, run it on numba's simulator: NUMBA_ENABLE_CUDASIM=1 python bit_cast.py
"""

# --8<-- [start:example]
import struct

import numpy as np

from gpukb.cuda.kernels import bits_of

x = np.array([1.0, -2.5, 0.1, float("inf")], dtype=np.float32)
host = x.view(np.uint32)  # numpy: a view of the same buffer, nothing converted
device = bits_of(x)  # a numba kernel reading the buffer through a uint32 view
for value, h, d in zip(x, host, device, strict=True):
    (packed,) = struct.unpack("<I", struct.pack("<f", value))  # the standard library's way
    print(f"{value!s:>5}: numpy 0x{h:08X}, struct 0x{packed:08X}, device 0x{d:08X}")
# --8<-- [end:example]

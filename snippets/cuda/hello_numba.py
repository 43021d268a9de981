"""Hello from GPU threads with numba: 2 blocks of 4 threads print their indices and record their global index.

Without a GPU, run it on numba's simulator: NUMBA_ENABLE_CUDASIM=1 python hello_numba.py
"""

# --8<-- [start:example]
import numpy as np
from numba import cuda

from gpukb.cuda.kernels import hello

out = np.full(8, -1, dtype=np.int64)
d_out = cuda.to_device(out)
hello[2, 4](d_out)  # <<<2 blocks, 4 threads per block>>>
cuda.synchronize()  # device printf output appears once the kernel is done
print("indices written:", d_out.copy_to_host().tolist())
# --8<-- [end:example]

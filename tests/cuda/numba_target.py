"""Whether numba-cuda's real CUDA target can load with this numpy (the simulator never loads it).

numba-cuda registers an overload of ``np.row_stack`` whenever numpy is 2.0 or later
(``numba_cuda/numba/cuda/np/arrayobj.py``, imported by the CUDA target when it compiles the first kernel), and
numpy 2.5 removed ``np.row_stack`` (numpy/numpy#30463). Through numba-cuda 0.30.4, the latest release, a kernel
launch on a GPU therefore fails with ``AttributeError: module 'numpy' has no attribute 'row_stack'`` on numpy
2.5; the fix (NVIDIA/numba-cuda#916, the guard numba itself ships since 0.67) was closed unmerged, the package
being in maintenance (NVIDIA/numba-cuda#907). The GPU tests of numba kernels skip there with this reason.
"""

from __future__ import annotations

#: The numpy versions numba-cuda's CUDA target loads with: numba 0.68's floor (it requires numpy>=1.22,<2.6), and
#: the ceiling of the row_stack bug.
WORKING_NUMPY = ">=1.22,<2.5"


def unavailable_reason() -> str | None:
    """Why numba-cuda's CUDA target cannot load here, or ``None`` when it can."""
    import numpy as np

    try:
        import numba.cuda.np.arrayobj  # noqa: F401  (what a first kernel launch imports)
    except AttributeError as err:
        if "row_stack" not in str(err):
            raise
        return (
            f"numba-cuda's CUDA target registers np.row_stack, which numpy {np.__version__} no longer has "
            f"(NVIDIA/numba-cuda#907, unfixed through numba-cuda 0.30.4): numba kernels run on a GPU with numpy "
            f"{WORKING_NUMPY} only; the project pins numpy>=1.26,<2.4"
        )
    return None

"""The GEMM chapter's Triton kernel, measured against cuBLAS.

* :mod:`~gpukb.gemm.triton.matmul`: the kernel and its host path (fp16, bf16, fp32; fp8 on Hopper).
* :mod:`~gpukb.gemm.triton.configs`: how the GEMM is tiled, torch-free; :mod:`~gpukb.gemm.triton.tuning`: its
  tuning table by shape class; :mod:`~gpukb.gemm.triton.sweep`: the shapes of its sweep.
* :mod:`~gpukb.gemm.triton.pairs`: the kernel paired with cuBLAS for ``gpukb bench`` (declared by the chapter).
* :mod:`~gpukb.gemm.triton.results`: the recorded runs of ``bench/triton_gemm.py`` and ``bench/triton_gemm_sweep.py``.

Nothing here imports torch or triton at import time.
"""

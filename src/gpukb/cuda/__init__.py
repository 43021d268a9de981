"""The CUDA chapter: execution model (thread indices, occupancy), kernels that run, and the memory model.

Modules: :mod:`gpukb.cuda.limits` (per compute capability limits, sourced data), :mod:`gpukb.cuda.occupancy`
(the occupancy calculator), :mod:`gpukb.cuda.indexing` (thread-index arithmetic), :mod:`gpukb.cuda.kernels`
(numba CUDA kernels), :mod:`gpukb.cuda.triton_kernels` (the Triton vector add), :mod:`gpukb.cuda.bits`
(bit reinterpretation), :mod:`gpukb.cuda.results` (recorded GPU runs) and :mod:`gpukb.cuda.pages` (the page layer).
"""

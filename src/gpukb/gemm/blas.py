"""The three levels of BLAS, one example operation each, with what each costs and moves.

BLAS sorts its routines by what they operate on: level 1 on vectors (``axpy``, ``dot``), level 2 on a matrix
and vectors (``gemv``), level 3 on matrices (``gemm``, ``trsm``). The level sets the arithmetic intensity:
levels 1 and 2 do a bounded number of operations per element they touch, so their speed is the memory's,
while level 3 does ``O(n)`` operations per element and can run at the arithmetic units' speed. That is why
deep learning is built on level 3 (GEMM) wherever it can be.

Counting conventions are :mod:`gpukb.measuring.counting`'s (a multiply-add is two operations; bytes are the fewest
the operation must move: each input read once, each output written once), and the GEMM counts come from there.
An operand that is updated (``y`` in ``axpy`` and ``gemv``, ``C`` in ``gemm`` with ``β ≠ 0``) is read and written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpukb.arguments import positive_int
from gpukb.measuring.counting import element_bytes, gemm_bytes, gemm_flops
from gpukb.performance.roofline import Bound, bound


@dataclass(frozen=True)
class BlasOp:
    """One BLAS operation of given sizes.

    Attributes:
        routine: The BLAS name: ``s``/``d`` + the operation for fp32/fp64 (``"sgemm"``); classic BLAS has no
            fp16 or bf16 routines, so for those the operation and the type (``"gemm (bf16)"``).
        level: 1, 2 or 3.
        operation: What it computes.
        flops: Floating-point operations.
        elements: Elements read plus elements written.
        nbytes: Bytes read plus bytes written.
    """

    routine: str
    level: int
    operation: str
    flops: int
    elements: int
    nbytes: int

    @property
    def per_element(self) -> float:
        """Operations per element moved: the "computational intensity"."""
        return self.flops / self.elements

    @property
    def intensity(self) -> float:
        """Operations per byte moved: the roofline's arithmetic intensity."""
        return self.flops / self.nbytes


#: Element types the examples are defined for, and the BLAS routine prefix of each ("" where BLAS has none).
DTYPES = {"fp64": "d", "fp32": "s", "fp16": "", "bf16": ""}


def _routine(name: str, dtype: str) -> str:
    if dtype not in DTYPES:
        raise ValueError(f"BLAS examples are defined for {sorted(DTYPES)}; got {dtype!r}")
    return DTYPES[dtype] + name if DTYPES[dtype] else f"{name} ({dtype})"


def axpy(n: int, dtype: str = "fp32") -> BlasOp:
    """Level 1: ``y ← α·x + y`` on vectors of length n (read x and y, write y)."""
    positive_int("n", n)
    eb = element_bytes(dtype)
    return BlasOp(_routine("axpy", dtype), 1, "y ← αx + y", 2 * n, 3 * n, 3 * n * eb)


def dot(n: int, dtype: str = "fp32") -> BlasOp:
    """Level 1: ``Σ x_i·y_i`` over vectors of length n (read both, write one scalar)."""
    positive_int("n", n)
    eb = element_bytes(dtype)
    return BlasOp(_routine("dot", dtype), 1, "xᵀy", 2 * n, 2 * n + 1, (2 * n + 1) * eb)


def gemv(m: int, n: int, dtype: str = "fp32") -> BlasOp:
    """Level 2: ``y ← α·A·x + β·y`` with A of shape m×n: a GEMM with one column, plus reading y."""
    positive_int("m", m)
    positive_int("n", n)
    eb = element_bytes(dtype)
    nbytes = gemm_bytes(m, 1, n, eb) + m * eb  # A, x, y written, and y read
    return BlasOp(_routine("gemv", dtype), 2, "y ← αAx + βy", gemm_flops(m, 1, n), nbytes // eb, nbytes)


def gemm(m: int, n: int, k: int, dtype: str = "fp32") -> BlasOp:
    """Level 3: ``C ← α·A·B + β·C`` with A m×k, B k×n (C read because β ≠ 0)."""
    eb = element_bytes(dtype)
    nbytes = gemm_bytes(m, n, k, eb) + positive_int("m", m) * positive_int("n", n) * eb
    return BlasOp(_routine("gemm", dtype), 3, "C ← αAB + βC", gemm_flops(m, n, k), nbytes // eb, nbytes)


def trsm(n: int, m: int, dtype: str = "fp32") -> BlasOp:
    """Level 3: ``X ← α·T⁻¹·X``, T an n×n triangular matrix, X of shape n×m (m right-hand sides).

    Forward substitution costs ``n²`` operations per right-hand side (n divisions, and ``n(n−1)/2``
    multiply-adds); T's triangle is read once and X read and written.
    """
    positive_int("n", n)
    positive_int("m", m)
    eb = element_bytes(dtype)
    elements = n * (n + 1) // 2 + 2 * n * m
    return BlasOp(_routine("trsm", dtype), 3, "X ← αT⁻¹X", m * n * n, elements, elements * eb)


#: One example per level, as functions of a single size n (square matrices, n right-hand sides).
EXAMPLES: dict[str, Callable[[int, str], BlasOp]] = {
    "axpy": lambda n, dtype: axpy(n, dtype),
    "dot": lambda n, dtype: dot(n, dtype),
    "gemv": lambda n, dtype: gemv(n, n, dtype),
    "gemm": lambda n, dtype: gemm(n, n, n, dtype),
    "trsm": lambda n, dtype: trsm(n, n, dtype),
}


def examples(n: int, dtype: str = "fp32") -> list[BlasOp]:
    """Every example of :data:`EXAMPLES` at size n."""
    return [make(n, dtype) for make in EXAMPLES.values()]


def growth(name: str, n: int, dtype: str = "fp32") -> float:
    """How much an example's operations per element grow when n doubles: about 1 for levels 1 and 2, 2 for 3.

    Raises:
        ValueError: For a name not in :data:`EXAMPLES`.
    """
    if name not in EXAMPLES:
        raise ValueError(f"unknown example {name!r}; known: {sorted(EXAMPLES)}")
    return EXAMPLES[name](2 * n, dtype).per_element / EXAMPLES[name](n, dtype).per_element


def floors(sizes: tuple[int, ...], dtype: str, peak_flops: float, bandwidth: float) -> list[tuple[int, BlasOp, Bound]]:
    """Each example at each size bounded on a machine: ``(n, operation, roofline bound)``, the bound being the
    larger of the compute and the memory time (:func:`gpukb.performance.roofline.bound`).

    Args:
        sizes: The sizes n.
        dtype: The element type.
        peak_flops: The compute ceiling, FLOP/s.
        bandwidth: The memory ceiling, bytes/s.
    """
    return [(n, op, bound(op.flops, op.nbytes, peak_flops, bandwidth)) for n in sizes for op in examples(n, dtype)]

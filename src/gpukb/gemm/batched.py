"""A batch of small matrix products, computed three ways: a loop of GEMMs, one batched GEMM, one big GEMM.

Many models multiply many small matrices at once (attention heads, the experts of a mixture, small blocks of a
factorization). Calling a GEMM once per matrix leaves most of a GPU idle and pays one launch per matrix; a
batched routine (``torch.bmm``; ``cublasSgemmBatched`` and ``cublasGemmStridedBatchedEx`` in cuBLAS,
``rocblas_dgemm_batched`` in rocBLAS, ``?gemm_batch`` in oneMKL, the batched routines of MAGMA) hands the whole
batch to the library in one call, which spreads the matrices over the multiprocessors. When every
product shares the same right-hand matrix (the same weights applied to many small inputs), the batch folds
into one ordinary GEMM with ``batch·m`` rows, the fastest form of all.

The functions take the ``torch`` module as an argument, so they run on the CPU build (tests, snippets) and on
a GPU (``bench/gemm_ground_up.py``) alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpukb.arguments import flag, given, integer, positive_int
from gpukb.measuring.counting import element_bytes, gemm_bytes, gemm_flops

#: The ways of computing a batch this module offers.
VARIANTS = ("loop", "bmm", "one_gemm")


@dataclass(frozen=True)
class Batch:
    """Operands of a batch of products ``C_i = A_i·B_i`` (i < batch), with preallocated outputs.

    Attributes:
        a: Shape (batch, m, k).
        b: Shape (batch, k, n): one B per product.
        b_shared: Shape (k, n): a single B for the shared-weight form.
        out: Shape (batch, m, n), written by every variant.
    """

    a: Any
    b: Any
    b_shared: Any
    out: Any

    @property
    def shape(self) -> tuple[int, int, int, int]:
        """``(batch, m, n, k)``."""
        batch, m, k = self.a.shape
        return batch, m, self.b.shape[2], k


def _batch(batch: object) -> None:
    if not isinstance(batch, Batch):
        raise TypeError(f"batch must be a Batch from make_batch(); got {given(batch)}")


def make_batch(torch: Any, batch: int, m: int, n: int, k: int, dtype: Any, device: str = "cpu", seed: int = 0) -> Batch:
    """Random operands (standard normal, never zeros) for a batch of m×k by k×n products.

    Raises:
        TypeError: If a size is not an int.
        ValueError: If a size is below 1.
    """
    for name, value in (("batch", batch), ("m", m), ("n", n), ("k", k)):
        positive_int(name, value)
    integer("seed", seed, minimum=0)
    gen = torch.Generator(device=device).manual_seed(seed)
    a = torch.randn(batch, m, k, generator=gen, device=device, dtype=dtype)
    b = torch.randn(batch, k, n, generator=gen, device=device, dtype=dtype)
    b_shared = torch.randn(k, n, generator=gen, device=device, dtype=dtype)
    return Batch(a=a, b=b, b_shared=b_shared, out=torch.empty(batch, m, n, device=device, dtype=dtype))


def variant(torch: Any, batch: Batch, name: str, shared: bool = False) -> Callable[[], Any]:
    """A function that computes the batch one way into ``batch.out`` and returns it.

    Args:
        torch: The ``torch`` module.
        batch: The operands.
        name: ``"loop"`` (one ``torch.mm`` per product), ``"bmm"`` (one ``torch.bmm``) or ``"one_gemm"``
            (the shared-B batch as one ``torch.mm`` of ``batch·m`` rows).
        shared: Use ``b_shared`` for every product (always true for ``"one_gemm"``).

    Raises:
        TypeError: If ``batch`` is not a ``Batch`` or ``shared`` is not a bool.
        ValueError: For an unknown name.
    """
    _batch(batch)
    shared = flag("shared", shared)
    count, m, n, k = batch.shape
    a, out = batch.a, batch.out
    if name == "loop":
        bs = [batch.b_shared] * count if shared else list(batch.b)

        def loop() -> Any:
            for i in range(count):
                torch.mm(a[i], bs[i], out=out[i])
            return out

        return loop
    if name == "bmm":
        b = batch.b_shared.expand(count, k, n) if shared else batch.b
        return lambda: torch.bmm(a, b, out=out)
    if name == "one_gemm":
        flat_a, flat_out = a.view(count * m, k), out.view(count * m, n)

        def one_gemm() -> Any:
            torch.mm(flat_a, batch.b_shared, out=flat_out)
            return out

        return one_gemm
    raise ValueError(f"unknown variant {name!r}; choose one of {list(VARIANTS)}")


def counts(batch: Batch, dtype: str, shared: bool = False) -> tuple[int, int]:
    """Operations and fewest bytes of the whole batch (:mod:`gpukb.measuring.counting`'s conventions).

    With ``shared``, B is read once for the batch rather than once per product.

    Raises:
        TypeError: If ``batch`` is not a ``Batch`` or ``shared`` is not a bool.
        ValueError: For an unknown element type.
    """
    _batch(batch)
    shared = flag("shared", shared)
    count, m, n, k = batch.shape
    eb = element_bytes(dtype)
    flops = count * gemm_flops(m, n, k)
    if shared:
        return flops, gemm_bytes(count * m, n, k, eb)
    return flops, count * gemm_bytes(m, n, k, eb)


def agreement(torch: Any, batch: Batch) -> dict[str, float]:
    """Largest absolute difference of each variant from ``torch.bmm`` on the same operands.

    ``loop`` and ``bmm`` are compared on per-product B; ``one_gemm`` with the shared-B ``bmm``.
    """
    reference = variant(torch, batch, "bmm")().clone()
    shared_reference = variant(torch, batch, "bmm", shared=True)().clone()
    return {
        "loop": float((variant(torch, batch, "loop")() - reference).abs().max()),
        "loop, shared B": float((variant(torch, batch, "loop", shared=True)() - shared_reference).abs().max()),
        "one_gemm": float((variant(torch, batch, "one_gemm")() - shared_reference).abs().max()),
    }

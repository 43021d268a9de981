"""The project's kernels and their peers, measured side by side in the same run.

A chapter that ships a kernel (a Triton GEMM, an attention kernel) registers a :class:`KernelPair`: how to build
inputs for a case, the kernel, the peer it competes with (cuBLAS through ``torch.matmul``,
``scaled_dot_product_attention``, a torch copy), and the operation and byte counts of a case. ``gpukb bench``
then times both on the same inputs, one after the other, and records their ratio and the fraction of the
measured and datasheet ceilings each reaches.

A chapter declares its pairs (``Chapter.kernel_pairs``, a function returning them); :func:`registry` collects
every chapter's, so nothing registers itself as a side effect of an import. A stand-in kernel would only measure
itself, so none is declared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpukb.chapters import kernel_pair_factories
from gpukb.measuring.stats import Summary, summarize
from gpukb.measuring.timing import Budget, Timer, benchmark
from gpukb.schema import Rate, Size, StrictModel


@dataclass(frozen=True)
class KernelPair:
    """A project kernel and the peer it is measured against.

    Attributes:
        name: Unique name, e.g. ``"triton-gemm-bf16"``.
        peer: The peer's name, e.g. ``"torch.matmul (cuBLAS)"``.
        cases: Case labels, e.g. ``("4096x4096x4096",)``.
        make_inputs: Builds the inputs of a case (random, never zero).
        kernel: Runs the project kernel on the inputs.
        reference: Runs the peer on the same inputs.
        flops: Operations of a case, or ``None`` where counting them means nothing.
        nbytes: Fewest bytes of a case, or ``None``.
        check: Compares kernel and peer outputs; raises ``AssertionError`` when they disagree.
    """

    name: str
    peer: str
    cases: Sequence[str]
    make_inputs: Callable[[str], Any]
    kernel: Callable[[Any], Any]
    reference: Callable[[Any], Any]
    flops: Callable[[str], int] | None = None
    nbytes: Callable[[str], int] | None = None
    check: Callable[[Any, Any], None] | None = None


@dataclass
class Registry:
    """Registered kernel pairs, by name."""

    pairs: dict[str, KernelPair] = field(default_factory=dict)

    def register(self, pair: KernelPair) -> KernelPair:
        """Add a pair; returns it, so that it can be used as a decorator-style call.

        Raises:
            TypeError: If ``pair`` is not a :class:`KernelPair`.
            ValueError: If the name is taken or the pair has no cases.
        """
        if not isinstance(pair, KernelPair):
            raise TypeError(f"register expects a KernelPair; got {type(pair).__name__}")
        if pair.name in self.pairs:
            raise ValueError(f"a kernel pair named {pair.name!r} is already registered; names: {sorted(self.pairs)}")
        if not pair.cases:
            raise ValueError(f"kernel pair {pair.name!r} has no cases to measure")
        self.pairs[pair.name] = pair
        return pair

    def __iter__(self) -> Iterator[KernelPair]:
        return iter(self.pairs.values())

    def __len__(self) -> int:
        return len(self.pairs)


class KernelRecord(StrictModel):
    """A project kernel against its peer on one case; ``ratio`` is the peer's median over the kernel's."""

    name: str
    peer: str
    case: str
    kernel_ms: Summary
    peer_ms: Summary
    ratio: Rate
    flops: Size | None
    bytes: Size | None


def registry() -> Registry:
    """Every chapter's declared kernel pairs, in chapter order.

    Raises:
        ValueError: If two chapters declare pairs of one name.
    """
    found = Registry()
    for factory in kernel_pair_factories():
        for pair in factory():
            found.register(pair)
    return found


def measure_pair(
    pair: KernelPair,
    case: str,
    timer: Timer,
    budget: Budget | None = None,
    before: Callable[[], object] | None = None,
) -> KernelRecord:
    """Time a kernel and its peer on the same inputs and return a ``kernels`` record of a sweep.

    The outputs are compared first (``pair.check``): a fast wrong kernel is not measured. The record's
    ``ratio`` is the peer's median time over the kernel's: above 1, the kernel is faster.
    """
    inputs = pair.make_inputs(case)
    if pair.check is not None:
        pair.check(pair.kernel(inputs), pair.reference(inputs))
    kernel = summarize(benchmark(lambda: pair.kernel(inputs), timer, budget, before).samples)
    peer = summarize(benchmark(lambda: pair.reference(inputs), timer, budget, before).samples)
    return KernelRecord(
        name=pair.name,
        peer=pair.peer,
        case=case,
        kernel_ms=kernel,
        peer_ms=peer,
        ratio=peer.median / kernel.median if kernel.median > 0 else 0.0,
        flops=pair.flops(case) if pair.flops else None,
        bytes=pair.nbytes(case) if pair.nbytes else None,
    )

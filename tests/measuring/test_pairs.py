"""Kernel/peer pairs: registration, and measuring a pair side by side (on the CPU, with a stand-in timer)."""

from __future__ import annotations

import argparse
import datetime as dt

import pytest

from gpukb.measuring.pairs import KernelPair, Registry, measure_pair, registry
from gpukb.measuring.timing import Budget
from gpukb.performance.suites import Context
from gpukb.performance.suites import kernels as kernels_suite
from gpukb.records import Run, Versions
from gpukb.records.script import Script


class CostTimer:
    """Reports, for each call, the cost the function itself returns: kernel and peer times without a clock."""

    def time(self, fn, n, before=None):
        return [fn() for _ in range(n)]


def _pair(name="toy", check=None) -> KernelPair:
    return KernelPair(
        name=name,
        peer="reference",
        cases=("small", "large"),
        make_inputs=lambda case: {"small": 1.0, "large": 4.0}[case],
        kernel=lambda x: 2.0 * x,  # "ms" the stand-in timer reports
        reference=lambda x: 3.0 * x,
        flops=lambda case: 100,
        nbytes=lambda case: 10,
        check=check,
    )


def test_register_and_iterate() -> None:
    registry = Registry()
    pair = registry.register(_pair())
    assert list(registry) == [pair]
    assert len(registry) == 1


def test_registration_errors_name_the_problem() -> None:
    registry = Registry()
    registry.register(_pair())
    with pytest.raises(ValueError, match=r"'toy' is already registered; names: \['toy'\]"):
        registry.register(_pair())
    with pytest.raises(TypeError, match="expects a KernelPair; got dict"):
        registry.register({})
    empty = KernelPair("e", "p", (), lambda c: None, lambda x: None, lambda x: None)
    with pytest.raises(ValueError, match="'e' has no cases"):
        registry.register(empty)


def test_measure_pair_reports_the_ratio_to_the_peer() -> None:
    record = measure_pair(_pair(), "large", CostTimer(), Budget(warmup_ms=0, rep_ms=0, min_reps=3, max_reps=3))
    assert record.kernel_ms.median == 8.0
    assert record.peer_ms.median == 12.0
    assert record.ratio == 1.5  # the peer's time over the kernel's: above 1, the kernel is faster
    assert (record.name, record.peer, record.case, record.flops, record.bytes) == (
        "toy",
        "reference",
        "large",
        100,
        10,
    )


def test_a_kernel_that_disagrees_with_its_peer_is_not_timed() -> None:
    def check(out, ref):
        assert out == ref, f"kernel gave {out}, peer {ref}"

    with pytest.raises(AssertionError, match=r"kernel gave 2\.0, peer 3\.0"):
        measure_pair(_pair(check=check), "small", CostTimer())


class CostScript(Script):
    """A script whose timer reports each call's own cost (:class:`CostTimer`) and whose flush does nothing."""

    def timer(self, calls: int = 1, host: bool = False) -> CostTimer:
        return CostTimer()

    @property
    def flush(self):
        return lambda: None


def _context(notes, lines) -> Context:
    budget = Budget(warmup_ms=0, rep_ms=0, min_reps=2, max_reps=2)
    run = Run(date=dt.date(2026, 11, 27), command="gpukb bench", machine="x86_64", cpu_count=2, gpu=None,
              versions=Versions(python="3.11.7"))  # fmt: skip
    script = CostScript(argparse.Namespace(output=None, rerecord=False), None, run, 0.0, device="cpu", budget=budget)
    return Context(script=script, mode="quick", progress=lines.append, notes=notes)


def test_the_kernels_suite_measures_every_case() -> None:
    registry, notes, lines = Registry(), [], []
    registry.register(_pair())
    records = kernels_suite.run(_context(notes, lines), registry)
    assert [r.case for r in records] == ["small", "large"]
    assert len(lines) == 2
    assert notes == []


def test_with_nothing_registered_the_suite_says_so() -> None:
    notes, lines = [], []
    assert kernels_suite.run(_context(notes, lines), Registry()) == []
    assert notes == ["kernels: no project kernel is registered yet; nothing to compare with a peer"]


def test_the_declared_pairs_are_real_kernels() -> None:
    # Each pair a chapter declares names a peer and has cases.
    declared = registry()
    assert len(declared) >= 1
    for pair in declared:
        assert pair.peer
        assert pair.cases

"""The distributed figures' numbers: the traced ring matches the algorithm's invariants, and the FSDP unit is one
block of the measured model as torch builds it."""

from __future__ import annotations

import itertools

import pytest

from gpukb.distributed.figures import ring_states, unit_traffic


@pytest.mark.parametrize("p", [2, 4, 5])
def test_ring_states(p: int) -> None:
    states = ring_states(p)
    assert len(states) == 1 + 2 * (p - 1)
    for (_, before), (_, after) in itertools.pairwise(states):
        assert all(a >= b for rb, ra in zip(before, after, strict=True) for b, a in zip(rb, ra, strict=True))
    _, scattered = states[p - 1]
    for r in range(p):  # after the reduce-scatter rank r holds chunk (r + 1) mod p complete, and only that one
        assert [c for c in range(p) if scattered[r][c] == p] == [(r + 1) % p]
    assert all(n == p for row in states[-1][1] for n in row)


def test_unit_is_one_block() -> None:
    pytest.importorskip("torch")
    from gpukb.distributed.model import block

    params = sum(x.numel() for x in block(768, 12).parameters())
    t = unit_traffic(world=2)
    assert t.params == params
    assert t.gathered_bytes == params * 2 / 2
    assert t.scattered_bytes == params * 4 / 2
    assert t.transient_bytes == params * (2 + 2 + 4)

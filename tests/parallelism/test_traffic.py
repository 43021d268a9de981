"""The ring's bytes per collective, and the log's reading of what was dispatched (the gloo runs check the log
against real collectives; these check the arithmetic)."""

from __future__ import annotations

import pytest

from gpukb.parallelism.traffic import KINDS, ring_sent_bytes


def test_ring_bytes() -> None:
    assert ring_sent_bytes("all_reduce", 4096, 4) == 2 * 3 * 1024
    assert ring_sent_bytes("all_gather", 4096, 4) == ring_sent_bytes("reduce_scatter", 4096, 4) == 3 * 1024
    assert ring_sent_bytes("all_to_all", 4096, 4) == 3 * 1024
    assert ring_sent_bytes("all_to_all", 4096, 4, to_others=100) == 100
    assert ring_sent_bytes("send", 4096, 4) == 4096
    assert ring_sent_bytes("recv", 4096, 4) == 0
    assert ring_sent_bytes("all_reduce", 4096, 1) == 0  # one rank sends nothing
    assert set(KINDS) == {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send", "recv", "broadcast"}


def test_ring_bytes_refuses() -> None:
    with pytest.raises(ValueError, match="all_gather of 10 bytes on 4 ranks: 10 is not divisible by 4"):
        ring_sent_bytes("all_gather", 10, 4)
    with pytest.raises(ValueError, match="unknown kind 'allreduce'"):
        ring_sent_bytes("allreduce", 8, 2)
    with pytest.raises(ValueError, match="ranks must be an int ≥ 1; got 0"):
        ring_sent_bytes("send", 8, 0)

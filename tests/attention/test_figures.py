"""The FlashAttention figure's tile counts, against a brute-force causal mask."""

from __future__ import annotations

import numpy as np
import pytest

from gpukb.attention.figures import flash_tiles


@pytest.mark.parametrize(("seq", "bm", "bn"), [(512, 64, 64), (256, 64, 32), (128, 32, 16)])
def test_tiles_match_the_mask(seq: int, bm: int, bn: int) -> None:
    keep = np.tril(np.ones((seq, seq), dtype=bool))  # query i sees keys 0..i
    full = masked = 0
    for i in range(seq // bm):
        for j in range(seq // bn):
            tile = keep[i * bm : (i + 1) * bm, j * bn : (j + 1) * bn]
            full += bool(tile.all())
            masked += bool(tile.any() and not tile.all())
    t = flash_tiles(seq, bm, bn, causal=True)
    assert (t.full, t.masked, t.skipped) == (full, masked, (seq // bm) * (seq // bn) - full - masked)
    assert flash_tiles(seq, bm, bn, causal=False).full == (seq // bm) * (seq // bn)


def test_refuses_tiles_that_do_not_divide() -> None:
    with pytest.raises(ValueError, match="must divide"):
        flash_tiles(100, 64, 64, causal=True)

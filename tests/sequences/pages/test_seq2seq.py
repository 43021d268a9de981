"""The cell checks of docs/sequences/seq2seq.md (``gpukb.sequences.pages.seq2seq``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from tests.helpers import markdown_tables, outside_tables


def check_bottleneck(markdown: str, kwargs: dict[str, Any]) -> None:
    """Recomputed with torch.nn.RNN and autograd on the same weights and inputs."""
    from gpukb.sequences.seq2seq import Seq2Seq

    (table,) = markdown_tables(markdown)
    assert outside_tables(markdown) == []  # the block prints the table alone
    model = Seq2Seq.random(seed=0)
    rnn = torch.nn.RNN(model.encoder.input_size, model.encoder.hidden_size).double()
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(rnn, f"{name}_l0").copy_(torch.from_numpy(getattr(model.encoder, name)))
    rng = np.random.default_rng(100)
    vocab = model.embedding.shape[0]
    emb = torch.from_numpy(model.embedding)

    hidden = model.encoder.hidden_size
    for row in table:
        n = int(row["input length"])
        ids = rng.integers(1, vocab, size=n)
        other = ids.copy()
        other[0] = 1 + (ids[0] % (vocab - 1))
        assert int(row["context size"]) == hidden == 16
        # the Jacobian's rows at once: H copies of the input as a batch, copy k's context component k summed
        x = emb[ids][:, None, :].repeat(1, hidden, 1).requires_grad_(True)
        rnn(x)[1][0].diagonal().sum().backward()
        jacobian = x.grad[0]  # (H, E): row k = ∂c_k/∂x_1
        assert float(row["‖∂c/∂x₁‖"]) == pytest.approx(torch.linalg.norm(jacobian).item(), rel=0.051), row
        with torch.no_grad():
            gap = torch.linalg.norm(rnn(emb[ids][:, None])[1] - rnn(emb[other][:, None])[1]).item()
        assert float(row["‖c(A) − c(B)‖"]) == pytest.approx(gap, rel=0.051, abs=1e-15), row


def check_capacity(markdown: str, kwargs: dict[str, Any]) -> None:
    """Counting, not the function's own numbers: the null space is T·E − H where positive, the first input's
    influence is the same at every length, and the pair's contexts agree to rounding."""
    (table,) = markdown_tables(markdown)
    assert outside_tables(markdown) == []  # the block prints the table alone
    assert [int(r["input length T"]) for r in table] == [1, 2, 3, 4, 8]
    assert len({r["‖∂c/∂x₁‖"] for r in table}) == 1
    for r in table:
        t, numbers, h = int(r["input length T"]), int(r["input numbers T·E"]), int(r["context size H"])
        assert numbers == 8 * t
        assert h == 16
        assert int(r["null space T·E − H"]) == max(0, numbers - h)
        if numbers > h:
            assert r["‖x₁(A) − x₁(B)‖"] == "1.00"
            assert float(r["‖c(A) − c(B)‖"]) < 1e-14  # rounding of numbers of size 1
        else:
            assert r["‖x₁(A) − x₁(B)‖"] == r["‖c(A) − c(B)‖"] == "–"


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "capacity": check_capacity,
    "bottleneck": check_bottleneck,
}

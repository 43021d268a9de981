"""The attention chapter's snippets, run as a reader runs them, and what they print asserted.

``CHECKS`` maps each snippet to its check; ``tests/test_snippets.py`` collects every topic's ``CHECKS``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest


def check_sdpa_reference(out: str) -> None:
    lines = out.splitlines()
    assert lines[0] == "output: (2, 4, 6, 8)"
    assert lines[1] == "keys seen by query 5 of sequence 1: 4"  # causal allows 6, padding leaves 4
    assert float(lines[2].split(": ")[1]) < 1e-14  # float64 both sides


def check_online_softmax(out: str) -> None:
    first, second = out.splitlines()
    m = re.fullmatch(r"running max (\S+), sum (\S+); max \|online - softmax\| = (\S+)", first)
    assert m, first
    rng = np.random.default_rng(0)
    x = rng.standard_normal(10) * 4
    x[7] = 30.0
    assert float(m[1]) == 30.0
    assert float(m[2]) == pytest.approx(np.exp(x - 30.0).sum(), abs=5e-7)
    assert float(m[3]) < 1e-15
    assert float(second.rsplit(" ", 1)[1]) < 1e-13


def check_flash_kernel(out: str) -> None:
    import torch

    from gpukb.attention.kernel import INTERPRETER_CONFIG

    fields = dict(line.split(": ", 1) for line in out.splitlines())
    if not torch.cuda.is_available():
        assert fields["device"] == f"cpu, tiling: {INTERPRETER_CONFIG.label}"
    assert fields["output"] == "(1, 4, 50, 64) float16"
    # outputs are weighted means of N(0, 1) values, |o| < 4: one fp16 rounding is at most 2^-11 · 4 = 2e-3
    ours, peer = float(fields["max |O - exact|"]), float(fields["max |SDPA - exact|"])
    assert 0 < ours < 2e-3
    assert 0 < peer < 2e-3
    assert ours <= 2 * peer


def check_flash_training(out: str) -> None:
    import math

    import torch

    first, second = out.splitlines()
    m = re.fullmatch(r"(\d+) steps on (\w+): first loss (\S+) \(SDPA (\S+)\), last (\S+) \(SDPA (\S+)\)", first)
    assert m, first
    gpu = torch.cuda.is_available()
    steps = 300 if gpu else 2
    assert (int(m[1]), m[2]) == (steps, "cuda" if gpu else "cpu")
    ours_first, peer_first, ours_last, peer_last = map(float, m.groups()[2:])
    # an untrained model guesses: its first loss is near ln(vocab) = ln 64 for both
    assert abs(ours_first - math.log(64)) < 0.3
    assert ours_first == pytest.approx(peer_first, rel=2**-8)
    m = re.fullmatch(r"steps equal to within bf16 rounding: kernel and SDPA (\d+), SDPA math and SDPA (\d+)", second)
    assert m, second
    ours, control = int(m[1]), int(m[2])
    if not gpu:  # two steps of a tiny model: every step agrees
        assert ours == control == steps
        return
    # the kernel stays equal to SDPA about as long as SDPA's own two backends stay equal to each other
    assert ours >= 0.8 * control
    # 300 steps learn to attend to the previous token: the loss falls far below guessing, for both
    assert ours_last < 0.5 * ours_first
    assert peer_last < 0.5 * peer_first


CHECKS: dict[str, Callable[[str], None]] = {
    "snippets/attention/sdpa_reference.py": check_sdpa_reference,
    "snippets/attention/online_softmax.py": check_online_softmax,
    "snippets/attention/flash_kernel.py": check_flash_kernel,
    "snippets/attention/flash_training.py": check_flash_training,
}

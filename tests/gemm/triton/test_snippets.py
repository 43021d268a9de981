"""The Triton GEMM chapter's snippets, run as a reader runs them, and what they print asserted.

``CHECKS`` maps each snippet to its check; ``tests/test_snippets.py`` collects every topic's ``CHECKS`` to prove
that each snippet has one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gpukb.site.snippets import run_snippet
from tests.helpers import ROOT


def check_triton_matmul(out: str) -> None:
    import torch

    from gpukb.gemm.triton.configs import INTERPRETER_CONFIG

    fields = dict(line.split(": ", 1) for line in out.splitlines())
    if not torch.cuda.is_available():  # the interpreter's tiles; on a GPU the label is whatever default_config picks
        assert fields["device"] == f"cpu, kernel: {INTERPRETER_CONFIG.label}"
    assert fields["C"] == "(100, 56) float16"
    gen = torch.Generator().manual_seed(0)  # the snippet's operands, rebuilt here
    a, b = torch.randn(100, 72, generator=gen).half(), torch.randn(72, 56, generator=gen).half()
    largest = (a.double() @ b.double()).abs().max().item()
    assert float(fields["largest |A@B|"]) == pytest.approx(largest, rel=1e-5)
    # One rounding of a float32 sum to fp16: within half an ulp, at most 2^-11 of the largest entry.
    assert 0 < float(fields["max |C - A@B| (float64)"]) <= 2**-11 * largest * (1 + 1e-5)
    # torch's product is within half an ulp of the exact value too, so the two differ by at most one ulp.
    assert float(fields["max |C - torch.matmul(A, B)|"]) <= 2**-10 * largest * (1 + 1e-5)


# --8<-- [start:checks]
CHECKS: dict[str, Callable[[str], None]] = {
    "snippets/gemm/triton_matmul.py": check_triton_matmul,
}


@pytest.mark.parametrize("snippet", sorted(CHECKS))
def test_snippet_output(snippet: str) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    CHECKS[snippet](run_snippet(ROOT / snippet))
    # --8<-- [end:checks]

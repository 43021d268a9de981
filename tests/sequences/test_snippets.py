"""The sequence chapter's snippets, run as a reader runs them, and what they print asserted."""

# ruff: noqa: N806  (matrix and size names W, U, E, H, dW follow the equations)

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Callable

import numpy as np

from tests.helpers import ROOT


def check_lstm_torch(out: str) -> None:
    lines = out.splitlines()
    gaps = dict(re.findall(r"^(.+?)\s+max \|numpy - torch\| = (\S+)$", out, flags=re.M))
    assert list(gaps) == ["output", "d weight_ih", "d weight_hh", "d bias_ih", "d bias_hh", "d x", "d h0", "d c0"]
    assert all(float(v) <= 1e-12 for v in gaps.values()), gaps
    assert float(re.search(r"two bias gradients differ by at most (\S+)$", out, flags=re.M).group(1)) <= 1e-12
    # the worked example through torch.nn.LSTM, autograd and a plain SGD step, against the example's own printed updates
    raw = tomllib.loads((ROOT / "src/gpukb/data/sequences/lstm_example.toml").read_text(encoding="utf-8"))
    printed = raw["example"][0]["printed"]
    values = {
        k: ast.literal_eval(v)
        for k, v in (
            re.match(r"^([^:]+):\s+(\[.*\])$", line).groups() for line in lines if re.match(r"^[^:]+:\s+\[", line)
        )
    }
    assert values["out"][0] == printed["out"][0]
    assert abs(values["out"][1] - printed["out"][1]) <= 1e-5
    torch_rows = [1, 2, 0, 3]  # i, f, g, o from the example's a, i, f, o
    np.testing.assert_allclose(
        values["updated weight_ih (rows i, f, g, o)"], np.array(printed["W_new"])[torch_rows], atol=1.01e-5, rtol=0
    )
    np.testing.assert_allclose(values["updated weight_hh"], np.array(printed["U_new"])[torch_rows], atol=1e-9)
    np.testing.assert_allclose(values["updated bias_ih"], np.array(printed["b_new"])[torch_rows], atol=1e-9)


def check_embedding_lookup(out: str) -> None:
    assert "vocabulary: {'The': 0, 'dog': 1, 'bit': 2, 'the': 3, 'man': 4, '.': 5}" in out
    assert "one_hot('dog') = [0. 1. 0. 0. 0. 0.]" in out
    E = np.arange(18.0).reshape(3, 6)
    assert f"E @ one_hot('dog') = {E[:, 1]}  = column 1 of E: {E[:, 1]}" in out
    assert "product == indexing: True" in out
    assert "rows of the weight gradient that are not zero: [1, 4]" in out
    assert "gradient of row 1 (used twice): [2.0, 2.0, 2.0]" in out


def check_seq2seq_context(out: str) -> None:
    rows = re.findall(r"^input of +(\d+) words -> context of shape \((\d+),\), decoded: (\[.*\])$", out, flags=re.M)
    assert [int(n) for n, _, _ in rows] == [3, 30, 300]
    assert {int(h) for _, h, _ in rows} == {16}
    for _, _, decoded in rows:
        words = ast.literal_eval(decoded)
        assert len(words) == 5
        assert all(0 <= w < 12 for w in words)


def check_bleu_vs_sacrebleu(out: str) -> None:
    raw = tomllib.loads((ROOT / "src/gpukb/data/sequences/bleu_examples.toml").read_text(encoding="utf-8"))
    line = raw["example"][0]["published"]["line"]
    assert f"gpukb     {line}" in out
    assert f"sacrebleu {line}" in out
    assert "tokenize='13a' : gpukb 48.5308, sacrebleu 48.5308" in out
    assert "tokenize='none': gpukb 49.1920, sacrebleu 49.1920" in out
    assert re.search(r"refs \['', 'Yes, he did it.'\]: BLEU = 70\.71 .*hyp_len = 2 ref_len = 0\)", out)
    assert re.search(r"refs \['Yes, he did it.'\]: +BLEU = 9\.57 .*hyp_len = 2 ref_len = 6\)", out)
    assert "gpukb: references[0] is empty ('')" in out


CHECKS: dict[str, Callable[[str], None]] = {
    "snippets/sequences/lstm_torch.py": check_lstm_torch,
    "snippets/sequences/embedding_lookup.py": check_embedding_lookup,
    "snippets/sequences/seq2seq_context.py": check_seq2seq_context,
    "snippets/sequences/bleu_vs_sacrebleu.py": check_bleu_vs_sacrebleu,
}

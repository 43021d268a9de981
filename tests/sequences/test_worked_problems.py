"""The sequence chapter's worked problems, recomputed with torch and sacreBLEU."""

from __future__ import annotations

import tomllib

import pytest

from tests.helpers import ROOT
from tests.worked_problems import answer, assert_shows, rendered_problems

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def problems() -> dict[str, str]:
    return rendered_problems("sequences")


def test_lstm_parameters(problems: dict[str, str]) -> None:
    lstm = torch.nn.LSTM(input_size=256, hidden_size=512)
    text = answer(problems["lstm-parameters"])
    assert_shows(text, sum(p.numel() for p in lstm.parameters()))
    assert f"weight_ih {lstm.weight_ih_l0.shape[0]:,} × {lstm.weight_ih_l0.shape[1]}" in text


def test_bleu(problems: dict[str, str]) -> None:
    sacrebleu = pytest.importorskip("sacrebleu")
    examples = tomllib.loads((ROOT / "src/gpukb/data/sequences/bleu_examples.toml").read_text("utf-8"))
    (ex,) = [e for e in examples["example"] if e["id"] == "sacrebleu-readme"]
    corpus = sacrebleu.corpus_bleu(ex["hypotheses"], ex["references"])
    sentences = [
        sacrebleu.sentence_bleu(h, [stream[i] for stream in ex["references"]]).score
        for i, h in enumerate(ex["hypotheses"])
    ]
    text = answer(problems["bleu"])
    assert_shows(text, corpus.score, corpus.bp, corpus.sys_len, corpus.ref_len, sum(sentences) / len(sentences))


def test_embedding_gradient(problems: dict[str, str]) -> None:
    table = torch.nn.Embedding(4, 2)
    ids = torch.tensor([2, 0, 2])
    upstream = torch.tensor([[1.0, 2.0], [0.5, -1.0], [3.0, 1.0]])
    (table(ids) * upstream).sum().backward()
    grad = table.weight.grad
    text = answer(problems["embedding-gradient"])
    touched = [i for i in range(4) if grad[i].abs().sum() > 0]
    assert f"rows {' and '.join(map(str, touched))}" in text
    for i in touched:
        assert f"row {i} gets [{', '.join(f'{v:g}' for v in grad[i].tolist())}]" in text

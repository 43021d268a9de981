"""The sequence chapter's worked problems, recomputed with torch and sacreBLEU."""

from __future__ import annotations

import math
import tomllib

import pytest

from gpukb.sequences.problems import lstm_parameters
from tests.helpers import ROOT
from tests.worked_problems import answer, assert_shows, numbers, question, rendered_problems, working

torch = pytest.importorskip("torch")


@pytest.fixture  # per test (rendered once, then cached), so mutmut maps every test to the problems it reads
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


def test_lstm_parameters_working(problems: dict[str, str]) -> None:
    """Each step's numbers, from torch's own LSTM: the gate rows, the two weight matrices, the two biases."""
    lstm = torch.nn.LSTM(input_size=256, hidden_size=512)
    rows, inputs = lstm.weight_ih_l0.shape
    hidden = lstm.weight_hh_l0.shape[1]
    weights = lstm.weight_ih_l0.numel() + lstm.weight_hh_l0.numel()
    biases = lstm.bias_ih_l0.numel() + lstm.bias_hh_l0.numel()
    gates, product, bias = working(problems["lstm-parameters"])
    assert numbers(question(problems["lstm-parameters"])) == [inputs, hidden]
    assert "(i, f, g, o)" in gates  # torch.nn.LSTM's documented order: W_ii | W_if | W_ig | W_io
    assert numbers(gates) == [4, rows]
    assert numbers(product) == [4, 4, rows, inputs, rows, hidden, weights]
    assert numbers(bias) == [lstm.bias_ih_l0.numel(), biases, weights + biases]


def test_bleu_working(problems: dict[str, str]) -> None:
    """The precisions, their geometric mean and the brevity penalty, from sacreBLEU; the README's line verbatim."""
    sacrebleu = pytest.importorskip("sacrebleu")
    examples = tomllib.loads((ROOT / "src/gpukb/data/sequences/bleu_examples.toml").read_text("utf-8"))
    (ex,) = [e for e in examples["example"] if e["id"] == "sacrebleu-readme"]
    corpus = sacrebleu.corpus_bleu(ex["hypotheses"], ex["references"])
    mean = sum(
        sacrebleu.sentence_bleu(h, [stream[i] for stream in ex["references"]]).score
        for i, h in enumerate(ex["hypotheses"])
    ) / len(ex["hypotheses"])
    geometric = 100 * math.exp(sum(math.log(p / 100) for p in corpus.precisions) / 4)
    c, r = corpus.sys_len, corpus.ref_len
    assert math.isclose(corpus.bp, math.exp(1 - r / c))  # c < r: the penalty applies
    precisions, penalty, product = working(problems["bleu"])

    def rounded(*values: float, digits: int) -> list[float]:
        return [round(v, digits) for v in values]

    assert numbers(precisions) == [*rounded(*corpus.precisions, digits=1), 1, 4, 13]
    assert numbers(penalty) == [round(geometric, 2), c, r, 1, r, c, round(corpus.bp, 3)]
    readme = f"`{ex['published']['line']}`"
    assert readme in product
    before, after = product.split(readme)
    assert numbers(before) == [round(corpus.bp, 3), round(geometric, 2), round(corpus.score, 2)]
    assert numbers(after) == [round(mean, 2)]


def test_embedding_gradient_working(problems: dict[str, str]) -> None:
    """The question's ids, table size and upstream rows, and the repeated token's sum, from torch autograd."""
    ids, upstream = [2, 0, 2], [[1.0, 2.0], [0.5, -1.0], [3.0, 1.0]]
    table = torch.nn.Embedding(4, 2)
    (table(torch.tensor(ids)) * torch.tensor(upstream)).sum().backward()
    assert numbers(question(problems["embedding-gradient"])) == [*ids, 4, 2, *(v for row in upstream for v in row)]
    (twice,) = [t for t in set(ids) if ids.count(t) == 2]
    uses = [row for i, row in zip(ids, upstream, strict=True) if i == twice]
    _, repeated, _ = working(problems["embedding-gradient"])
    assert numbers(repeated) == [twice, *uses[0], *uses[1], *table.weight.grad[twice].tolist()]


def test_lstm_parameters_answer_by_hand() -> None:
    """I = 256, H = 512: 4H = 2,048 rows; 2,048·(256 + 512) weights + 2·2,048 biases = 1,576,960."""
    assert lstm_parameters().answer == (
        "1,576,960: weight_ih 2,048 × 256, weight_hh 2,048 × 512, and two bias vectors of 2,048."
    )


def test_the_bleu_problem_cites_the_readme_it_scores(problems: dict[str, str]) -> None:
    from gpukb.sequences import bleu

    example = bleu.examples()["sacrebleu-readme"]
    (line,) = [ln.strip() for ln in problems["bleu"].splitlines() if ln.strip().startswith("Sources:")]
    assert line == f"Sources: [sacreBLEU README, Using SacreBLEU from Python]({example.url})."

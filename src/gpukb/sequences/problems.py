"""Worked problems of the sequence-models chapter, every answer computed by the library (see :mod:`gpukb.problems`)."""

from __future__ import annotations

import numpy as np

from gpukb.problems import Problem
from gpukb.sequences import bleu
from gpukb.sequences.embedding import lookup_grad
from gpukb.sequences.lstm import GATE_ORDER, LSTMParams


def lstm_parameters() -> Problem:
    inputs, hidden = 256, 512
    p = LSTMParams.random(inputs, hidden)
    shapes = {name: getattr(p, name).shape for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}
    total = sum(int(np.prod(s)) for s in shapes.values())
    return Problem(
        id="lstm-parameters",
        title="The parameters of an LSTM layer",
        question=f"How many parameters does `torch.nn.LSTM(input_size={inputs}, hidden_size={hidden})` have, and "
        "how are they laid out?",
        answer=f"{total:,}: weight_ih {shapes['weight_ih'][0]:,} × {shapes['weight_ih'][1]}, weight_hh "
        f"{shapes['weight_hh'][0]:,} × {shapes['weight_hh'][1]}, and two bias vectors of {shapes['bias_ih'][0]:,}.",
        working=(
            f"Four gates ({', '.join(GATE_ORDER)}), each with its own weights on the input and on the previous "
            f"hidden state, stacked in torch's order: 4H = {4 * hidden:,} rows.",
            f"4H·I + 4H·H = {4 * hidden:,}·{inputs} + {4 * hidden:,}·{hidden} = "
            f"{4 * hidden * (inputs + hidden):,} weights.",
            f"torch keeps two biases, bias_ih and bias_hh ({4 * hidden:,} each), though only their sum matters: "
            f"{2 * 4 * hidden:,} more, {total:,} in all.",
        ),
    )


def brevity_penalty() -> Problem:
    example = bleu.examples()["sacrebleu-readme"]
    score = bleu.corpus_bleu(example.hypotheses, example.references)
    mean = bleu.mean_sentence_bleu(example.hypotheses, example.references)
    c, r = score.stats.hyp_len, score.stats.ref_len
    return Problem(
        id="bleu",
        title="A corpus BLEU score, taken apart",
        question="sacreBLEU's README scores three system sentences against two reference streams. What is the "
        "corpus BLEU, how much of it does the brevity penalty cost, and is it the mean of the sentence scores?",
        answer=f"BLEU {score.score:.2f} with a brevity penalty of {score.bp:.3f} ({c} hypothesis tokens against "
        f"{r}); the mean of the three sentence BLEUs is {mean:.2f}, a different number.",
        working=(
            f"Clipped n-gram precisions over the whole corpus: {' / '.join(f'{x:.1f}' for x in score.precisions)} % "
            "for orders 1 to 4 (13a tokens).",
            f"Geometric mean of the four: {score.score / score.bp:.2f}; the hypotheses are shorter than the closest "
            f"references ({c} < {r} tokens), so BP = e^(1 − {r}/{c}) = {score.bp:.3f}.",
            f"BLEU = {score.bp:.3f} × {score.score / score.bp:.2f} = {score.score:.2f}; the README prints "
            f"`{example.published.line if example.published else 'no score'}`. Corpus BLEU sums the counts before "
            f"dividing, so it is not the mean of per-sentence scores ({mean:.2f}).",
        ),
        sources=(("sacreBLEU README, Using SacreBLEU from Python", example.url),),
    )


def embedding_gradient() -> Problem:
    vocab, dim = 4, 2
    ids = [2, 0, 2]
    grad_rows = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 1.0]])
    grad = lookup_grad((vocab, dim), ids, grad_rows)
    touched = [i for i in range(vocab) if np.any(grad[i])]

    def vec(v: np.ndarray) -> str:
        return f"[{', '.join(f'{x:g}' for x in v)}]"

    return Problem(
        id="embedding-gradient",
        title="The gradient of an embedding lookup",
        question=f"A batch looks up token ids {ids} in a {vocab} × {dim} embedding table; the gradients reaching the "
        f"three looked-up rows are {', '.join(vec(g) for g in grad_rows)}. What is the gradient of the table?",
        answer=f"Only rows {' and '.join(map(str, touched))} are non-zero: row 0 gets {vec(grad[0])}, row 2 gets "
        f"{vec(grad[2])}, the sum of its two uses.",
        working=(
            "A lookup is one_hot(ids) @ W, so ∂L/∂W = one_hot(ids)ᵀ @ ∂L/∂rows: a scatter-add of each row's gradient "
            "into the row it came from.",
            f"Token 2 is looked up twice: {vec(grad_rows[0])} + {vec(grad_rows[2])} = {vec(grad[2])}.",
            "Rows never looked up get zero gradient, which is why embedding tables are often updated sparsely "
            "(`torch.nn.Embedding(sparse=True)`).",
        ),
    )


def problems() -> list[Problem]:
    """The chapter's worked problems, computed now."""
    return [lstm_parameters(), brevity_penalty(), embedding_gradient()]

"""Every table the sequence pages render, read back by header and checked against an independent computation:
torch autograd for the LSTM example and the encoder, sacreBLEU for BLEU, the raw data files read with tomllib."""

# ruff: noqa: N806  (matrix and size names W, U, E, H, dW follow the equations)

from __future__ import annotations

import inspect
import re
import tomllib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import sacrebleu
import torch

from tests.helpers import ROOT, markdown_tables, outside_tables
from tests.page_calls import page_calls

_LSTM_FILE = tomllib.loads((ROOT / "src/gpukb/data/sequences/lstm_example.toml").read_text(encoding="utf-8"))
LSTM_RAW = {"example": _LSTM_FILE["example"][0], "printed": _LSTM_FILE["example"][0]["printed"]}
BLEU_RAW = {
    e["id"]: e
    for e in tomllib.loads((ROOT / "src/gpukb/data/sequences/bleu_examples.toml").read_text(encoding="utf-8"))[
        "example"
    ]
}
NAMES = {  # the page's label of each quantity → the data file's key
    "a (input activation)": "a",
    "i (input gate)": "i",
    "f (forget gate)": "f",
    "o (output gate)": "o",
    "state (cell c)": "state",
    "out (h)": "out",
    "Δ = out − y": "Delta",
    "Δout (from t + 1)": "Delta_out",
    "δout": "d_out",
    "δstate": "d_state",
    "δa": "d_a",
    "δi": "d_i",
    "δf": "d_f",
    "δo": "d_o",
    "δx": "d_x",
    "Δout(t − 1)": "Delta_out_prev",
    "δW": "dW",
    "δU": "dU",
    "δb": "db",
    "W": "W_new",
    "U": "U_new",
    "b": "b_new",
}
GATES = "aifo"


def _torch_example() -> dict[str, np.ndarray]:
    """The worked example by hand in torch ops, every intermediate's gradient from autograd (retain_grad)."""
    ex = LSTM_RAW["example"]
    W = torch.tensor(ex["W"], dtype=torch.float64, requires_grad=True)
    U = torch.tensor(ex["U"], dtype=torch.float64, requires_grad=True)
    b = torch.tensor(ex["b"], dtype=torch.float64, requires_grad=True)
    xs = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in ex["x"]]
    h_init = torch.zeros((), dtype=torch.float64, requires_grad=True)
    h, c = h_init, torch.zeros((), dtype=torch.float64)
    keep: dict[str, list[torch.Tensor]] = {k: [] for k in ("z", "gates", "c", "h")}
    loss = 0
    for x, y in zip(xs, ex["labels"], strict=True):
        z = W @ x + U * h + b
        z.retain_grad()
        gates = torch.cat([torch.tanh(z[:1]), torch.sigmoid(z[1:])])
        c = gates[2] * c + gates[0] * gates[1]
        h = gates[3] * torch.tanh(c)
        c.retain_grad()
        h.retain_grad()
        for k, v in (("z", z), ("gates", gates), ("c", c), ("h", h)):
            keep[k].append(v)
        loss = loss + 0.5 * (h - y) ** 2
    loss.backward()
    out = np.array([v.item() for v in keep["h"]])
    delta = out - np.array(ex["labels"])
    d_out = np.array([v.grad.item() for v in keep["h"]])
    dz = np.array([v.grad.numpy() for v in keep["z"]])
    lr = ex["learning_rate"]
    values = {g: np.array([v[k].item() for v in keep["gates"]]) for k, g in enumerate(GATES)}
    values.update(
        {
            "state": np.array([v.item() for v in keep["c"]]),
            "out": out,
            "Delta": delta,
            "Delta_out": d_out - delta,
            "d_out": d_out,
            "d_state": np.array([v.grad.item() for v in keep["c"]]),
            **{f"d_{g}": dz[:, k] for k, g in enumerate(GATES)},
            "d_x": np.array([x.grad.numpy() for x in xs]),
            "Delta_out_prev": np.array([h_init.grad.item(), (d_out - delta)[0]]),
            "dW": W.grad.numpy(),
            "dU": U.grad.numpy(),
            "db": b.grad.numpy(),
            "W_new": W.detach().numpy() - lr * W.grad.numpy(),
            "U_new": U.detach().numpy() - lr * U.grad.numpy(),
            "b_new": b.detach().numpy() - lr * b.grad.numpy(),
        }
    )
    return values


def _index(key: str, where: str) -> tuple[int, ...]:
    """'t = 1, x2' → (1, 1); 'f, x1' → (2, 0); 'o' → (3,)."""
    parts = [p.strip() for p in where.split(",")]
    first = int(parts[0][4:]) if parts[0].startswith("t = ") else GATES.index(parts[0])
    return (first, int(parts[1][1:]) - 1) if len(parts) > 1 else (first,)


def check_lstm_example(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert outside_tables(markdown) == []  # the block prints the table alone
    exact = _torch_example()
    part = kwargs["args"][0] if kwargs["args"] else kwargs["part"]
    expected_keys = {
        "forward": "a i f o state out",
        "backward": "Delta Delta_out d_out d_state d_a d_i d_f d_o d_x Delta_out_prev",
        "gradients": "dW dU db",
        "updated": "W_new U_new b_new",
    }[part].split()
    assert [k for k in dict.fromkeys(NAMES[r["quantity"]] for r in table)] == expected_keys
    assert len(table) == sum(np.size(LSTM_RAW["printed"][k]) for k in expected_keys)
    for row in table:
        key = NAMES[row["quantity"]]
        index = _index(key, row["t or gate"])
        computed = float(exact[key][index])
        printed = float(np.asarray(LSTM_RAW["printed"][key])[index])
        assert float(row["computed"]) == pytest.approx(computed, abs=5e-7), row
        assert float(row["printed"]) == printed, row
        assert float(row["printed − computed"]) == pytest.approx(printed - computed, rel=0.06, abs=1e-12), row
        rounded = round(computed, 5) == printed or round(computed, 4) == printed
        assert row["correctly rounded"] == ("yes" if rounded else "no"), row


def check_lstm_example_summary(markdown: str, kwargs: dict[str, Any]) -> None:
    """The counts and the largest gap over every printed number of the data file, against torch's exact values,
    rounded as the table's check rounds them."""
    exact = _torch_example()
    seen = []  # (|printed - exact|, correctly rounded) for every printed number
    for key, printed in LSTM_RAW["printed"].items():
        for index, p in np.ndenumerate(np.asarray(printed, dtype=float)):
            c = float(exact[key][index])
            seen.append((abs(p - c), round(c, 5) == p or round(c, 4) == p))
    same = sum(ok for _, ok in seen)
    gap = max(g for g, ok in seen if not ok)
    found = re.fullmatch(
        r"(\d+) of the (\d+) printed numbers are the exact values correctly rounded; the other (\d+) differ in the "
        r"last printed digit, by at most (\S+) \((.+)\)\.\n",
        markdown,
    )
    assert found, markdown
    assert [int(n) for n in found.groups()[:3]] == [same, len(seen), len(seen) - same]
    assert found[4] == f"{gap:.1e}"


def check_lstm_example_setup(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    ex = LSTM_RAW["example"]
    torch_name = {"a": "g", "i": "i", "f": "f", "o": "o"}  # torch.nn.LSTM: i, f, g, o
    assert [r["gate (example)"] for r in table] == ex["gate_order"] == list(GATES)
    for k, row in enumerate(table):
        gate = row["gate (example)"]
        assert row["torch gate"] == torch_name[gate]
        assert int(row["torch row"]) == "ifgo".index(torch_name[gate])
        assert [float(row["W (x1)"]), float(row["W (x2)"])] == ex["W"][k]
        assert (float(row["U"]), float(row["b"])) == (ex["U"][k], ex["b"][k])
    # the sentence under the table: the inputs, labels and learning rate of the data file, and its source
    xs = ", ".join(f"x{t} = ({', '.join(f'{v:g}' for v in x)})" for t, x in enumerate(ex["x"]))
    ys = ", ".join(f"y{t} = {y:g}" for t, y in enumerate(ex["labels"]))
    assert outside_tables(markdown) == [
        f"Inputs {xs}; labels {ys}; learning rate λ = {ex['learning_rate']:g}. Source: {ex['author']}, "
        f"[{ex['title']}]({ex['url']}), {ex['published']:%d %B %Y} (read {ex['checked']})."
    ]


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


def check_bleu_defaults(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert outside_tables(markdown) == []  # the block prints the table alone
    corpus = inspect.signature(sacrebleu.corpus_bleu).parameters
    sentence = inspect.signature(sacrebleu.sentence_bleu).parameters
    yes = {True: "yes", False: "no"}
    expected = {
        "tokenizer": (corpus["tokenize"].default, sentence["tokenize"].default),
        "smoothing": (corpus["smooth_method"].default, sentence["smooth_method"].default),
        "effective order": (yes[corpus["use_effective_order"].default], yes[sentence["use_effective_order"].default]),
        "lowercase": (yes[corpus["lowercase"].default], yes[sentence["lowercase"].default]),
        "largest n-gram order": (str(sacrebleu.metrics.bleu.MAX_NGRAM_ORDER),) * 2,
    }
    assert {r["setting"]: (r["corpus BLEU"], r["sentence BLEU"]) for r in table} == expected


def check_bleu_tokenization(markdown: str, kwargs: dict[str, Any]) -> None:
    from sacrebleu.metrics.bleu import _get_tokenizer

    (table,) = markdown_tables(markdown)
    assert outside_tables(markdown) == []  # the block prints the table alone
    ex = BLEU_RAW[kwargs["args"][0]]
    assert [r["tokenizer"] for r in table] == ["13a", "none"]
    for row in table:
        theirs = sacrebleu.corpus_bleu(ex["hypotheses"], ex["references"], tokenize=row["tokenizer"])
        assert row["corpus BLEU"] == f"{theirs.score:.2f}"
        assert (int(row["hyp_len"]), int(row["ref_len"])) == (theirs.sys_len, theirs.ref_len)
        tokens = _get_tokenizer(row["tokenizer"])()(ex["hypotheses"][0]).split()
        assert row["first hypothesis as tokens"].split(" · ") == tokens


def check_bleu_segments(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert outside_tables(markdown) == []  # the block prints the table alone
    ex = BLEU_RAW[kwargs["args"][0]]
    refs = list(zip(*ex["references"], strict=True))
    for tok in ("13a", "none"):
        column = f"sentence BLEU, {tok}"
        scores = [
            sacrebleu.sentence_bleu(h, list(r), tokenize=tok).score for h, r in zip(ex["hypotheses"], refs, strict=True)
        ]
        assert [row[column] for row in table[:-2]] == [f"{s:.2f}" for s in scores]
        assert table[-2][column] == f"{sum(scores) / len(scores):.2f}"
        assert (
            table[-1][column] == f"{sacrebleu.corpus_bleu(ex['hypotheses'], ex['references'], tokenize=tok).score:.2f}"
        )
    assert [r["hypothesis"] for r in table[:-2]] == ex["hypotheses"]
    # segments numbered from 1 in the data file's order, then the two whole-corpus rows: the mean, then corpus BLEU
    assert [r["segment"] for r in table] == [str(k) for k in range(1, len(ex["hypotheses"]) + 1)] + ["all", "all"]
    assert "mean" in table[-2]["hypothesis"]
    assert "corpus" in table[-1]["hypothesis"]


def check_bleu_smoothing(markdown: str, kwargs: dict[str, Any]) -> None:
    from sacrebleu.metrics import BLEU

    (table,) = markdown_tables(markdown)
    assert outside_tables(markdown) == []  # the block prints the table alone
    ex = BLEU_RAW[kwargs["args"][0]]
    assert len(table) == len(ex["scores"])
    defaults = {"floor": "0.1 (default)", "add-k": "1 (default)"}
    for row, s in zip(table, ex["scores"], strict=True):
        value = s.get("smooth_value")
        assert (row["smoothing"], row["tokenizer"]) == (s["smooth"], s["tokenize"])
        assert row["value"] == (f"{value:g}" if value is not None else defaults.get(s["smooth"], "-"))
        metric = BLEU(tokenize=s["tokenize"], smooth_method=s["smooth"], smooth_value=value, effective_order=True)
        theirs = metric.sentence_score(ex["hypotheses"][0], [ex["references"][0][0]]).score
        assert row["gpukb"] == f"{theirs:.5f}"
        assert float(row["the source expects"]) == s["score"]


def check_bleu_published(markdown: str, kwargs: dict[str, Any]) -> None:
    """sacreBLEU's own score line for the example, then the line and signature its source printed (raw data)."""
    ex = BLEU_RAW[kwargs["args"][0]]
    score = sacrebleu.corpus_bleu(ex["hypotheses"], ex["references"])
    printed = ex["published"]
    assert markdown.splitlines() == [
        f"- gpukb: `{score}`",
        f"- printed by the source ([{ex['source']}]({ex['url']}), read {ex['checked']}): `{printed['line']}`, "
        f"signature `{printed['signature']}`",
    ]
    assert markdown.endswith("`\n")


def check_sequences_errata(markdown: str, kwargs: dict[str, Any]) -> None:
    """One folded note per erratum named, in the data file's order, each with its claim, its deciding test and the
    link to its entry; the errata file read raw."""
    raw = tomllib.loads((ROOT / "src/gpukb/data/errata.toml").read_text(encoding="utf-8"))["erratum"]
    named = [e for e in raw if e["id"] in kwargs["args"]]
    assert len(named) == len(kwargs["args"]) and all(e["topic"] == "sequences" for e in named)
    blocks = markdown.split("\n\n")
    assert len(blocks) == 2 * len(named)
    for e, note, decided in zip(named, blocks[::2], blocks[1::2], strict=True):
        head, truth = note.split("\n", 1)
        assert head == f'??? note "A claim you may meet: {e["claim"]}"'
        assert truth == f"    {e['truth']}"
        assert decided.strip("\n") == f"    Decided by `{e['test']}`; [errata entry](../../about/errata/#{e['id']})."


def check_versions(markdown: str, kwargs: dict[str, Any]) -> None:
    from importlib import metadata

    shown = ", ".join(f"{p} {metadata.version(p)}" for p in ("numpy", "torch", "sacrebleu"))
    assert markdown == f"Built with {shown}; everything on these pages runs on the CPU."


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
    "bleu_published": check_bleu_published,
    "sequences_errata": check_sequences_errata,
    "versions": check_versions,
    "lstm_example_summary": check_lstm_example_summary,
    "bleu_smoothing": check_bleu_smoothing,
    "lstm_example": check_lstm_example,
    "lstm_example_setup": check_lstm_example_setup,
    "bottleneck": check_bottleneck,
    "bleu_defaults": check_bleu_defaults,
    "bleu_tokenization": check_bleu_tokenization,
    "bleu_segments": check_bleu_segments,
}


def test_every_checked_function_is_on_a_page() -> None:
    assert {c.function for c in page_calls() if c.module == "gpukb.sequences.pages"} >= set(CHECKS)


def test_a_wrong_printed_value_fails_the_check() -> None:
    from gpukb.sequences import pages

    markdown = pages.lstm_example("forward").replace("| 0.81775 |", "| 0.81776 |", 1)
    with pytest.raises(AssertionError):
        check_lstm_example(markdown, {"args": ("forward",)})

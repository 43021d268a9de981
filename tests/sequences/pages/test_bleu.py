"""The cell checks of docs/sequences/bleu.md (``gpukb.sequences.pages.bleu``)."""

from __future__ import annotations

import inspect
import tomllib
from collections.abc import Callable
from typing import Any

import sacrebleu

from tests.helpers import ROOT, markdown_tables, outside_tables

BLEU_RAW = {
    e["id"]: e
    for e in tomllib.loads((ROOT / "src/gpukb/data/sequences/bleu_examples.toml").read_text(encoding="utf-8"))[
        "example"
    ]
}


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


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "bleu_smoothing": check_bleu_smoothing,
    "bleu_defaults": check_bleu_defaults,
    "bleu_tokenization": check_bleu_tokenization,
    "bleu_segments": check_bleu_segments,
    "bleu_published": check_bleu_published,
}

"""The four-GPU page's table checked against the record read raw: each round, the medians, the interval."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

import pytest

from gpukb.distributed.pages.four_gpus import modes_answer, modes_markdown
from tests.distributed.pages import _arg, _by_id, _table


def _binomial_interval(values: list[float]) -> tuple[float, float]:
    """The sign-test interval for the median, written out: the largest j with 1 - 2·P(Bin(n, 1/2) < j) ≥ 0.95."""
    n = len(values)
    js = [j for j in range(1, n // 2 + 1) if 1 - 2 * sum(math.comb(n, i) for i in range(j)) / 2**n >= 0.95]
    ordered = sorted(values)
    return ordered[max(js) - 1], ordered[n - max(js)]


def check_modes(markdown: str, kwargs: dict[str, Any]) -> None:
    """Each round's tokens/s and ratio, the alternating order, the medians and the interval, from the record."""
    rows = _table(markdown)
    raw = _by_id(_arg(kwargs, "record_id", 0, "distributed/fsdp-modes-h100x4"))
    runs = {r["mixed_precision"]: r["tokens_per_s"] for r in raw["runs"]}
    default, pure = runs["DEFAULT"], runs["PURE"]
    ratios = [p / d for p, d in zip(pure, default, strict=True)]
    assert [r["round"] for r in rows] == [str(i + 1) for i in range(len(default))] + ["median"]
    for i, row in enumerate(rows[:-1]):
        assert row["order"] == ("DEFAULT, PURE" if i % 2 == 0 else "PURE, DEFAULT")
        assert int(row["DEFAULT tokens/s"].replace(",", "")) == round(default[i])
        assert int(row["PURE tokens/s"].replace(",", "")) == round(pure[i])
        assert float(row["PURE / DEFAULT"]) == pytest.approx(ratios[i], abs=0.0005)
    assert rows[-1]["order"] == ""
    assert int(rows[-1]["DEFAULT tokens/s"].replace(",", "")) == round(statistics.median(default))
    assert int(rows[-1]["PURE tokens/s"].replace(",", "")) == round(statistics.median(pure))
    low, high = _binomial_interval(ratios)
    assert rows[-1]["PURE / DEFAULT"] == (
        f"{statistics.median(ratios):.3f} (96% interval {low:.3f} to {high:.3f})"  # 12 rounds: j = 3 covers 96.1%
    )
    flops = 6 * raw["parameters"] * statistics.median(default + pure) / raw["world_size"] / 1e12
    assert f"at least {flops:,.0f} TFLOP/s" in markdown
    peaks = {r["mixed_precision"]: r["peak_bytes"] / 2**30 for r in raw["runs"]}
    assert f"Peak memory per GPU: DEFAULT {peaks['DEFAULT']:.2f} GiB, PURE {peaks['PURE']:.2f} GiB." in markdown

    for note in raw["run"]["notes"]:  # how the rounds were run: what makes them paired
        assert note in markdown


def check_modes_answer(markdown: str, kwargs: dict[str, Any]) -> None:
    """The page's one-sentence answer: the median of the paired ratios and its sign-test interval, from the record,
    and which side of the claimed 5% the interval's top lies."""
    raw = _by_id(_arg(kwargs, "record_id", 0, "distributed/fsdp-modes-h100x4"))
    runs = {r["mixed_precision"]: r["tokens_per_s"] for r in raw["runs"]}
    ratios = [p / d for p, d in zip(runs["PURE"], runs["DEFAULT"], strict=True)]
    n, median = len(ratios), statistics.median(ratios)
    low, high = _binomial_interval(ratios)
    j = sorted(ratios).index(low) + 1
    coverage = 1 - 2 * sum(math.comb(n, i) for i in range(j)) / 2**n
    assert "H100" in raw["run"]["gpu"]["name"]
    assert markdown.startswith(
        f"On {raw['world_size']} H100s, PURE trained the {raw['parameters'] / 1e6:,.0f}M-parameter model at "
        f"**{median:.3f}×** DEFAULT's tokens/s (median of {n} paired rounds; {coverage:.0%} confidence interval "
        f"{low:.3f}× to {high:.3f}×): {median - 1:+.0%}, "
    )
    below = "an interval that stops below the 5% at which the claimed 5–15% begins."
    assert markdown.endswith(below if high < 1.05 else f"an interval that reaches {high - 1:+.0%}.")


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "modes_markdown": check_modes,
    "modes_answer": check_modes_answer,
}


@pytest.mark.parametrize("render", [modes_answer, modes_markdown])
def test_a_record_of_unpaired_repeats_is_refused(render) -> None:
    # fsdp-h100x2 ran --repeats 10, each mode after the other: its ratios were read as 10 "paired rounds"
    with pytest.raises(ValueError, match=r"--repeats 10: its modes were not trained in alternating rounds"):
        render("distributed/fsdp-h100x2")


def test_the_pages_typed_facts_hold() -> None:
    """What the page's prose states by hand: the model's size and batch, the rounds, and the earlier pages' spread."""
    from gpukb.distributed.model import ModelConfig
    from tests.helpers import ROOT

    page = (ROOT / "docs/distributed/four-gpus.md").read_text(encoding="utf-8")
    raw = _by_id("distributed/fsdp-modes-h100x4")
    config = ModelConfig.gpu_bound()
    assert raw["parameters"] == config.parameter_count()
    assert f"{raw['parameters'] / 1e6:.0f}M parameters (width {config.hidden}, {config.layers} layers)" in page
    assert raw["model"]["hidden"] == config.hidden
    assert raw["model"]["layers"] == config.layers
    assert f"batch {raw['batch']}\n   of {raw['model']['seq']:,} tokens per GPU" in page
    assert len(raw["runs"][0]["tokens_per_s"]) == 12
    assert "all twelve rounds" in page
    # "spread by up to half their median": the widest (max - min) / median of those runs on the 1- and 2-GPU pages
    spreads = [
        (max(t) - min(t)) / statistics.median(t)
        for record in ("distributed/fsdp-interleaved", "distributed/fsdp-interleaved-h100x2")
        for r in _by_id(record)["runs"]
        if r["fsdp"] and r["checkpointing"] == "none" and (t := r["tokens_per_s"])
    ]
    assert 0.45 <= max(spreads) <= 0.6
    assert "spread by up to half their median" in page
    assert f"small model ({ModelConfig.gpt_small().parameter_count() / 1e6:.0f}M parameters)" in page

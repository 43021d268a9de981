"""One figure per quantity: the registry reconciles the committed runs, and the built site states one figure per
quantity id on every page (rendered mentions are marked ``<span class="gpukb-q" data-quantity="...">``)."""

from __future__ import annotations

import re
import statistics
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gpukb.performance import pages
from gpukb.performance.pages import h100 as h100_page
from gpukb.performance.pages import measuring as measuring_page
from gpukb.performance.quantities import QUANTITIES, Quantity, Reading, Reconciled, quantity, reconcile

NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")


class _Marked(HTMLParser):
    """Collects the text of every ``span.gpukb-q`` with its ``data-quantity``."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []
        self._open: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "span" and "gpukb-q" in (values.get("class") or "").split():
            self._open, self._text = values.get("data-quantity") or "", []

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self._open is not None:
            self.found.append((self._open, "".join(self._text)))
            self._open = None


def marked_figures(html: str) -> list[tuple[str, str]]:
    """``(quantity id, the figure stated)`` for every marked mention in a page; the figure is the first number."""
    parser = _Marked()
    parser.feed(html)
    out = []
    for quantity_id, text in parser.found:
        match = NUMBER.search(text)
        out.append((quantity_id, match.group(0) if match else text))
    return out


def conflicts(pages_html: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    """Quantity ids stated with more than one figure: id → figure → the pages stating it."""
    seen: dict[str, dict[str, list[str]]] = {}
    for page, html in pages_html.items():
        for quantity_id, figure in marked_figures(html):
            seen.setdefault(quantity_id, {}).setdefault(figure, []).append(page)
    return {q: figures for q, figures in seen.items() if len(figures) > 1}


def test_every_quantity_is_measured_by_the_committed_records() -> None:
    for quantity_id, q in QUANTITIES.items():
        r = reconcile(quantity_id)
        assert r.quantity is q
        assert r.readings
        assert r.value == pytest.approx(statistics.median(x.value for x in r.readings))
        assert r.low <= r.value <= r.high


def test_the_cublas_bf16_8192_figure_gathers_every_run_of_it() -> None:
    r = reconcile("h100-cublas-bf16-8192")
    assert set(r.records) == {"performance/h100-sweep", "gemm/triton-gemm-h100"}
    wheres = [x.where for x in r.readings]
    assert any(w.startswith("gemm: bf16 square") for w in wheres)
    assert any(w.startswith("gemm: bf16 alignment") for w in wheres)
    assert any(w.startswith("sweep: cuBLAS paired with") for w in wheres)
    assert any(w.startswith("compare:") for w in wheres)
    assert all(x.clocks is not None for x in r.readings)  # the re-recorded runs sampled clocks in every window


def test_methods_that_measure_different_things_are_different_quantities() -> None:
    methods = [q.method for q in QUANTITIES.values() if q.id.startswith("h100-cublas-bf16-8192")]
    assert len(methods) == 3
    assert len(set(methods)) == len(methods)
    assert {x.where for x in reconcile("h100-cublas-bf16-8192-do-bench").readings} == {"timing: do_bench"}


def test_reconciled_arithmetic_and_drift() -> None:
    q = Quantity(id="x", title="x", unit="u", method="m", readers=())
    r = Reconciled(q, (Reading("a", "1", 90.0), Reading("a", "2", 100.0), Reading("b", "3", 110.0)))
    assert (r.value, r.low, r.high) == (100.0, 90.0, 110.0)
    assert r.drift == pytest.approx(0.2)
    assert r.inside_drift(1.1)
    assert not r.inside_drift(1.3)
    assert r.records == ["a", "b"]
    assert r.clock_range() is None
    assert r.text() == "100"


def test_an_unknown_quantity_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown quantity 'nope'; quantities are \["):
        quantity("nope")
    with pytest.raises(ValueError, match="unknown quantity"):
        reconcile("nope")


def test_the_span_marks_the_reconciled_figure() -> None:
    html = pages.quantity("h100-cublas-bf16-8192")
    assert marked_figures(html) == [("h100-cublas-bf16-8192", reconcile("h100-cublas-bf16-8192").text())]
    sentence = pages.quantity_sentence("h100-cublas-bf16-8192")
    assert f"{len(reconcile('h100-cublas-bf16-8192').readings)} runs" in sentence


def test_the_checker_finds_two_figures_for_one_quantity() -> None:
    one = '<p><span class="gpukb-q" data-quantity="q">686</span> and <span class="gpukb-q" data-quantity="r">1</span>'
    other = '<p>cuBLAS: <span class="gpukb-q" data-quantity="q">656.7 TFLOP/s</span></p>'
    assert conflicts({"a.html": one, "b.html": other}) == {"q": {"686": ["a.html"], "656.7": ["b.html"]}}
    assert conflicts({"a.html": one, "c.html": one}) == {}


def test_every_page_of_the_built_site_states_one_figure_per_quantity(built_site) -> None:
    site, _ = built_site
    html = {str(p.relative_to(site)): p.read_text(encoding="utf-8") for p in Path(site).rglob("*.html")}
    # a page without the marker's class has no marked figure: parse only the others (the parser is slow)
    html = {page: text for page, text in html.items() if "gpukb-q" in text}
    assert conflicts(html) == {}
    marks = {page: marked_figures(text) for page, text in html.items()}
    stated = {q for found in marks.values() for q, _ in found}
    assert stated <= set(QUANTITIES)
    assert "h100-cublas-bf16-8192" in stated
    # copy bandwidth and the GEMM ceilings: stated, marked, on the pages that quote them
    where = {q: {page for page, found in marks.items() if any(m == q for m, _ in found)} for q in CEILINGS}
    assert "performance/h100/index.html" in where["h100-copy-1gib"]
    assert "cudnn/h100/index.html" in where["h100-copy-1gib"]
    assert "cudnn/h100/index.html" in where["h100-cublas-fp16-ceiling"]
    assert {"performance/h100/index.html"} <= where["h100-cublas-bf16-ceiling"]
    assert "performance/h100/index.html" in where["h100-copy-u16-over-u32"]
    assert "cuda/memory/index.html" in where["h100-copy-u16-over-u32"]
    figures = {q: reconcile(q).text() for q in stated}
    for found in marks.values():
        for quantity_id, figure in found:
            assert figure == figures[quantity_id], quantity_id


#: The quantities that give the H100's ceilings: every page quotes these, never a sweep's single fastest call.
CEILINGS = ("h100-copy-256mib", "h100-copy-1gib", "h100-cublas-fp16-ceiling", "h100-cublas-bf16-ceiling",
            "h100-copy-u16-over-u32")  # fmt: skip


def test_the_ceilings_are_one_figure_from_interleaved_rounds() -> None:
    """Copy bandwidth and the fp16/bf16 ceilings come from the interleaved run, one reading per round, and every
    page function that bounds work with them uses that figure, not the sweep's maximum."""
    from gpukb.cudnn import pages as cudnn_pages
    from gpukb.performance.ceilings import H100_CEILING_QUANTITIES, h100_ceilings, measured_ceilings
    from gpukb.performance.results import H100_CEILINGS, H100_SWEEP, CeilingsRecord
    from gpukb.records import load

    rounds = load(H100_CEILINGS, CeilingsRecord).rounds
    for quantity_id in CEILINGS:
        r = reconcile(quantity_id)
        assert len(r.readings) == rounds, quantity_id
        assert r.records == [H100_CEILINGS]
    ceilings, sweep = h100_ceilings(), measured_ceilings(H100_SWEEP)
    for key, quantity_id in H100_CEILING_QUANTITIES.items():
        assert ceilings[key] == reconcile(quantity_id).value
        assert ceilings[key] != sweep[key]  # the sweep's single fastest call is not the figure
    assert {k: v for k, v in ceilings.items() if k not in H100_CEILING_QUANTITIES} == {
        k: v for k, v in sweep.items() if k not in H100_CEILING_QUANTITIES
    }
    sentence = cudnn_pages.layer_ceilings("fp16")
    assert f'data-quantity="h100-cublas-fp16-ceiling">{reconcile("h100-cublas-fp16-ceiling").text()}<' in sentence
    assert f'data-quantity="h100-copy-1gib">{reconcile("h100-copy-1gib").text()}<' in sentence
    assert f"{sweep['fp16']:.0f}" not in sentence


def test_the_flush_and_clock_sentences_come_from_the_record() -> None:
    from gpukb.performance.results import H100_SWEEP, H200_SWEEP, SweepRecord
    from gpukb.performance.suites.mistakes import FLUSHED, WRITE_FLUSHED
    from gpukb.records import load

    run = load(H100_SWEEP, SweepRecord)
    rates = {r.variant: r.rate for r in run.mistake("l2_cache")}
    text = measuring_page.flush_effect()
    assert f"{rates[f'copy 16 MiB, {FLUSHED}']:,.0f} after a read flush" in text
    assert f"after a write flush it measured {rates[f'copy 16 MiB, {WRITE_FLUSHED}']:,.0f}" in text
    largest = max((r for r in run.gemm if r.dtype == "bf16" and r.sweep == "square"), key=lambda r: r.m)
    assert f"{largest.m}³ at a median {largest.clocks.sm_mhz_median:.0f} MHz" in h100_page.sustained_clocks()
    assert h100_page.flush_note().startswith("This run flushed L2 by reading")
    assert h100_page.flush_note(H200_SWEEP).startswith("This run flushed L2 by reading")
    older = run.model_copy(update={"l2_flush": "write"})  # records made before 2026-11-23 flushed by writing
    assert h100_page.flush_note(older).startswith("This run predates the read flush")
    assert measuring_page.window_text(None) == "–"


def test_the_triton_page_sets_its_ratio_against_the_drift() -> None:
    from gpukb.gemm.pages import triton as triton_page
    from gpukb.gemm.triton.results import committed, goal_rows, measured_ceiling

    big = next(r for r in goal_rows(committed(), measured_ceiling()) if r.size == 8192)
    cublas = reconcile("h100-cublas-bf16-8192")
    text = triton_page.triton_drift()
    assert f"8192³: {big.ratio:.3f}" in text
    assert f"is {'inside' if cublas.inside_drift(big.ratio) else 'outside'} that drift" in text
    assert pages.quantity("h100-cublas-bf16-8192", unit=True) in text
    assert triton_page.triton_defaults_note().startswith("The code's defaults")

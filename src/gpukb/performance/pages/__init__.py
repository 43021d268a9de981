"""The performance chapter's page layer: one module per page, the only code that turns its records and
datasheets into Markdown (tables) and inline SVG (figures).

The numbers come from committed ``gpukb bench`` sweeps, read by id through :mod:`gpukb.records`
(:data:`~gpukb.performance.results.H100_SWEEP` unless a page names another), the analysis in
:mod:`gpukb.performance.ceilings`, :mod:`gpukb.performance.roofline` and :mod:`gpukb.measuring.counting`, and
the datasheet table :mod:`gpukb.performance.specs`. Pages call these functions with no paths. This package holds
what several pages share, in any chapter: a quantity's one figure (:func:`quantity`), stated once and quoted by
id.
"""

from __future__ import annotations

from gpukb.performance import specs
from gpukb.performance.quantities import reconcile
from gpukb.performance.results import SweepRecord

Sweep = SweepRecord | str


STATUS_MARK = {"confirmed": "", "secondary": " †", "unconfirmed": " ?"}


def _num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def _datasheet(record: SweepRecord) -> specs.Gpu | None:
    return specs.datasheet_for(record.run.gpu.name)


def quantity(quantity_id: str, unit: bool = False) -> str:
    """A quantity's one figure (:func:`gpukb.performance.quantities.reconcile`) as inline HTML that marks what it is:
    ``<span class="gpukb-q" data-quantity="h100-cublas-bf16-8192">722</span>``. The site's tests check that
    every page gives one id one figure."""
    r = reconcile(quantity_id)
    shown = f"{r.text()} {r.quantity.unit}" if unit else r.text()
    return f'<span class="gpukb-q" data-quantity="{r.quantity.id}">{shown}</span>'


def quantity_sentence(quantity_id: str) -> str:
    """One sentence: the quantity, its figure, the spread of its runs and the SM clocks they ran at, and how it is
    timed."""
    r = reconcile(quantity_id)
    q = r.quantity
    digits = q.digits
    clocks = r.clock_range()
    if len(r.readings) == 1:
        clock = "" if clocks is None else f"; median SM clock {clocks[0]:.0f} MHz"
        runs = f"one run (`{r.readings[0].record_id}`{clock})"
    else:
        clock = "" if clocks is None else f"; the runs' median SM clocks {clocks[0]:.0f}–{clocks[1]:.0f} MHz"
        runs = (
            f"the median of {len(r.readings)} runs' medians (range {r.low:.{digits}f}–{r.high:.{digits}f}, a drift "
            f"of {100 * r.drift:.0f}%{clock})"
        )
    return f"{q.title}: **{quantity(quantity_id, unit=True)}**, {runs}. Timed by {q.method}."


def quantity_list(*quantity_ids: str) -> str:
    """A Markdown list of :func:`quantity_sentence` for each id."""
    return "\n".join(f"- {quantity_sentence(q)}" for q in quantity_ids)

"""The H100 page's sentences and the command line's run summary, checked against the records read raw (``json``),
and its tables for runs unlike the committed ones (a GPU the datasheet lacks, refused cases, a run that recorded no
driver or clocks), made by changing a committed record's JSON (:func:`tests.performance.pages.variant`)."""

from __future__ import annotations

import posixpath
import re
import statistics
from typing import Any

import pytest

from gpukb.performance.pages import _pct
from gpukb.performance.pages import h100 as page
from tests.helpers import ROOT, markdown_tables
from tests.performance.pages import DASH, H100, _raw, _raw_of, _rounds, variant
from tests.performance.pages.test_h100 import (
    check_attention,
    check_ceilings,
    check_copy_sizes,
    check_copy_widths,
    check_gemm_peaks,
    check_host_device,
    check_kernels,
    check_meta,
)
from tests.performance.pages.test_measuring import check_mistake, check_one_run

H200 = "performance/h200-sweep"
UNKNOWN_GPU = "Imaginary GPU"  # a name no entry of gpu_specs.toml matches


def _unknown_gpu(raw: dict[str, Any]) -> None:
    raw["run"]["gpu"]["name"] = UNKNOWN_GPU


def test_a_missing_spread_or_share_is_a_dash() -> None:
    assert page._spread(None) == _pct(None) == DASH


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """The ``## heading`` sections of a run summary, each with the blocks (tables) under it."""
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    assert parts[0] == "", parts[0][:80]  # the summary opens with its first heading
    return [(heading, body.strip().split("\n\n\n\n")) for heading, body in zip(parts[1::2], parts[2::2], strict=True)]


@pytest.mark.parametrize("record", [H100, "performance/h100-sweep-quick"])
def test_the_run_summary_holds_each_suites_tables(record: str) -> None:
    """What ``gpukb bench`` prints after a run (or for ``--show FILE``): a section per suite the record holds, in a
    fixed order, each holding only its tables, of that record (checked cell by cell as on the page)."""
    raw = _raw(record)
    kwargs = {"record": record}
    mistakes = [m for m in ("sync", "cold_start", "zeros", "idle_gpu", "l2_cache")
                if any(r["mistake"] == m for r in raw["mistakes"])]  # fmt: skip
    checks = {"Run": [check_meta], "Matrix products: best per type": [check_gemm_peaks],
              "Device copies": [check_copy_sizes, check_copy_widths],
              "Host-device copies (GB/s)": [check_host_device],
              "Attention, bf16, head dim 128, no mask (TFLOP/s)": [check_attention],  # the defaults: 128, no mask
              **{f"Mistake: {m}": [check_mistake] for m in mistakes},
              "Mistake: one run": [check_one_run], "Project kernels": [check_kernels]}  # fmt: skip
    assert len(mistakes) == 5
    assert {"gemm", "copy", "host_device", "attention", "kernels"} <= set(raw["suites"])
    sections = _sections(page.run_summary(record))
    assert [heading for heading, _ in sections] == list(checks)
    for heading, blocks in sections:
        assert len(blocks) == len(checks[heading]), heading
        for block, check in zip(blocks, checks[heading], strict=True):
            assert all(line.startswith("|") for line in block.splitlines()), (heading, block[:200])
            args = (heading.removeprefix("Mistake: "),) if check is check_mistake else ()
            check(block, {**kwargs, "args": args})


def test_the_meta_table_says_what_a_run_did_not_record() -> None:
    def forget(raw: dict[str, Any]) -> None:
        run = raw["run"]
        run["gpu"]["driver"] = None
        run["versions"].update(torch_cuda=None, torch=None, triton=None)
        run.update(started=None, duration_s=None, clocks={})

    record, kwargs = variant(H100, forget)
    (table,) = markdown_tables(page.meta_table(record))
    cells = {row["item"]: row["value"] for row in table}
    assert (cells["driver"], cells["CUDA (torch build)"], cells["torch"], cells["triton"]) == (
        "not readable", "none", "not installed", "not installed")  # fmt: skip
    assert cells["date (UTC)"] == kwargs["raw"]["run"]["date"]  # the day, where the start time is not recorded
    assert cells["duration"] == "not recorded"
    assert cells["clocks"] == "not readable"
    assert not any(item.startswith("clocks ") for item in cells)


def _drop_tf32(raw: dict[str, Any]) -> None:
    raw["gemm"] = [r for r in raw["gemm"] if r["dtype"] != "tf32"]


def _no_fp8_error(raw: dict[str, Any]) -> None:
    _drop_tf32(raw)
    for r in raw["gemm"]:
        if r["dtype"] == "fp8":
            r["rel_error"] = None


def _copies_reversed(raw: dict[str, Any]) -> None:
    raw["copy"].reverse()  # the element-width copies (and a repeated size) before the sizes


@pytest.mark.parametrize(
    ("function", "check", "change"),
    [
        (page.gemm_peaks, check_gemm_peaks, _no_fp8_error),
        (page.gemm_peaks, check_gemm_peaks, _unknown_gpu),
        (page.copy_sizes, check_copy_sizes, _unknown_gpu),
        (page.copy_sizes, check_copy_sizes, _copies_reversed),
        (page.ceilings_table, check_ceilings, _unknown_gpu),
        (page.ceilings_table, check_ceilings, _drop_tf32),
    ],
    ids=[
        "gemm-no-tf32-no-fp8-error",
        "gemm-unknown-gpu",
        "copies-unknown-gpu",
        "copies-reversed",
        "ceilings-unknown-gpu",
        "ceilings-no-tf32",
    ],
)
def test_tables_of_runs_unlike_the_committed_ones(function, check, change) -> None:
    record, kwargs = variant(H100, change)
    check(function(record), kwargs)


def _refusals(raw: dict[str, Any]) -> None:
    """Two reasons a backend refused a case (one of them twice, first for a causal case), and a case not run."""
    cases = {(r["backend"], r["seq"], r["head_dim"], r["causal"]): r for r in raw["attention"]}
    for key, error in [(("cudnn", 1024, 128, True), "refused: no cuDNN kernel"),
                       (("cudnn", 2048, 128, False), "refused: no cuDNN kernel"),
                       (("efficient", 4096, 128, False), "refused: too much shared memory")]:  # fmt: skip
        cases[key].update(ms=None, tflops=None, clocks=None, error=error)
    raw["attention"].remove(cases[("flash", 8192, 128, False)])  # a backend missing from one sequence


def check_attention_errors(text: str, raw: dict[str, Any]) -> None:
    """One bullet per distinct reason a backend refused (cases not run are not refusals): how many cases, and the
    first as ``backend s=... d=...``, with `` causal`` for a causal one."""
    reasons: dict[str, list[dict[str, Any]]] = {}
    for r in raw["attention"]:
        if r["error"] and not r["error"].startswith("not run"):
            reasons.setdefault(r["error"], []).append(r)
    lines = text.splitlines()
    assert len(lines) == len(reasons), text
    for line, (error, cases) in zip(lines, reasons.items(), strict=True):
        first = cases[0]
        case = f"{first['backend']} s={first['seq']} d={first['head_dim']}{' causal' if first['causal'] else ''}"
        assert line == f"- `{error}` ({len(cases)} cases, e.g. {case})", line


def test_refused_and_missing_attention_cases() -> None:
    record, kwargs = variant(H100, _refusals)
    for head_dim, causal in [(128, False), (128, True)]:
        check_attention(page.attention_table(head_dim, causal, record), {**kwargs, "head_dim": head_dim,
                                                                         "causal": causal})  # fmt: skip
    check_attention_errors(page.attention_errors(record), kwargs["raw"])
    assert page.attention_errors() == ""  # the committed run: every case ran or was not run by design


def _slug(heading: str) -> str:
    return re.sub(r"[^\w-]", "", heading.strip().lower().replace(" ", "-"))


def test_a_run_without_project_kernels_links_to_the_measurements_elsewhere() -> None:
    record, kwargs = variant(H100, lambda raw: raw.update(kernels=[]))
    text = page.kernels_against_peers(record)
    assert f"({kwargs['raw']['run']['date']})" in text
    links = re.findall(r"\]\(([^)]+)\)", text)
    assert links
    headings = {_slug(line.lstrip("#")) for line in (ROOT / "docs/performance/h100.md").read_text("utf-8").splitlines()
                if line.startswith("#")}  # fmt: skip
    for link in links:  # as the browser resolves them from /performance/h100/
        if link.startswith("#"):
            assert link[1:] in headings, link
            continue
        target = posixpath.normpath(posixpath.join("/performance/h100/", link)).strip("/")
        assert (ROOT / "docs" / f"{target}.md").is_file() or (ROOT / "docs" / target / "index.md").is_file(), link


SUSTAINED = re.compile(
    r"During the timed calls of the (?P<dtype>\w+) squares the SM clock \(maximum (?P<top>\d+) MHz\) ran "
    r"(?P<small>\d+)³ at a median (?P<small_mhz>\d+) MHz(?: drawing (?P<small_w>\d+) W)?, and "
    r"(?P<large>\d+)³ at a median (?P<large_mhz>\d+) MHz(?: drawing (?P<large_w>\d+) W)?; "
    r"the lowest median was (?P<lowest_mhz>\d+) MHz, at (?P<lowest>\d+)³\.[^.]+\."
    r"(?P<limit> The limit is (?P<w>\d+) W;)?"
)


def check_sustained(text: str, raw: dict[str, Any], dtype: str) -> None:
    rows = [r for r in raw["gemm"] if r["dtype"] == dtype and r["sweep"] == "square" and r["clocks"] is not None]
    found = SUSTAINED.match(text)
    assert found, text
    start = raw["run"]["clocks"].get("start")
    top = start["max_sm_mhz"] if start and start.get("max_sm_mhz") else max(r["clocks"]["sm_mhz_median"] for r in rows)
    small, large = min(rows, key=lambda r: r["m"]), max(rows, key=lambda r: r["m"])
    lowest = min(rows, key=lambda r: r["clocks"]["sm_mhz_median"])
    assert found["dtype"] == dtype
    assert found["top"] == f"{top:.0f}"
    for key, r in (("small", small), ("large", large)):
        assert int(found[key]) == r["m"]
        assert found[f"{key}_mhz"] == f"{r['clocks']['sm_mhz_median']:.0f}"
        power = r["clocks"]["power_w_median"]
        assert found[f"{key}_w"] == (None if power is None else f"{power:.0f}"), (key, text)
    assert (int(found["lowest"]), found["lowest_mhz"]) == (lowest["m"], f"{lowest['clocks']['sm_mhz_median']:.0f}")
    limit = start.get("power_limit_w") if start else None
    powers = [r["clocks"]["power_w_median"] for r in rows if r["clocks"]["power_w_median"] is not None]
    over = bool(limit and powers and max(powers) > limit)  # readings above the limit are explained, none else
    assert (found["limit"] is not None) == over, text
    if over:
        assert found["w"] == f"{limit:.0f}"


def _no_start_reading(raw: dict[str, Any]) -> None:
    raw["run"]["clocks"] = {}


def _start_maximum(value: float | None) -> Any:
    return lambda raw: raw["run"]["clocks"]["start"].update(max_sm_mhz=value)


def _no_power(raw: dict[str, Any]) -> None:
    for r in raw["gemm"]:
        if r["clocks"]:
            r["clocks"]["power_w_median"] = None


def _limit_at_highest(raw: dict[str, Any]) -> None:
    highest = max(r["clocks"]["power_w_median"] for r in raw["gemm"] if r["dtype"] == "bf16" and r["clocks"])
    raw["run"]["clocks"]["start"]["power_limit_w"] = highest  # reached, not exceeded


@pytest.mark.parametrize(
    ("record", "dtype", "change"),
    [(H100, "bf16", None), (H100, "fp32", None), (H200, "bf16", None), (H100, "bf16", _no_start_reading),
     (H100, "bf16", _start_maximum(2010.0)), (H100, "bf16", _start_maximum(None)), (H100, "bf16", _no_power),
     (H100, "bf16", _limit_at_highest)],
    ids=["h100", "h100-fp32", "h200", "no-start", "start-max-2010", "start-max-unread", "no-power", "limit-reached"],
)  # fmt: skip
def test_the_clock_sentence_reads_the_sampled_clocks(record: str, dtype: str, change) -> None:
    if change is None:
        text, raw = page.sustained_clocks(record, dtype), _raw(record)
    else:
        changed, kwargs = variant(record, change)
        text, raw = page.sustained_clocks(changed, dtype), _raw_of(kwargs)
    check_sustained(text, raw, dtype)


def test_the_fp16_bf16_note_reads_the_interleaved_rounds() -> None:
    raw = _raw("performance/ceilings-h100")
    gemm = [t for t in raw["timings"] if t["item"].startswith("gemm-")]
    shapes = sorted({t["item"].removeprefix("gemm-fp16-").removeprefix("gemm-bf16-") for t in gemm})
    text = page.fp16_bf16_note()
    assert text.startswith(f"In every one of the {raw['rounds']} rounds bf16 ran a little faster than fp16 (")
    inside = re.search(r"than fp16 \((.*); medians of the rounds\)", text)[1]
    pairs = re.findall(r"(\d+×\d+×\d+): bf16 ([\d.]+), fp16 ([\d.]+) TFLOP/s", inside)
    assert [shape for shape, _, _ in pairs] == [s.replace("x", "×") for s in shapes]
    assert inside == ", ".join(f"{s}: bf16 {b}, fp16 {f} TFLOP/s" for s, b, f in pairs)
    for (_, bf16, fp16), shape in zip(pairs, shapes, strict=True):
        for cell, dtype in ((bf16, "bf16"), (fp16, "fp16")):
            rate = statistics.median(t["rate"] for t in gemm if t["item"] == f"gemm-{dtype}-{shape}")
            assert _rounds(cell, rate, 1), (shape, dtype, cell)

    def clock(dtype: str) -> str:
        return f"{statistics.median(t['clocks']['sm_mhz_median'] for t in gemm if f'-{dtype}-' in t['item']):.0f}"

    assert f"the fp16 products ran was {clock('fp16')} MHz, against {clock('bf16')} MHz for bf16" in text

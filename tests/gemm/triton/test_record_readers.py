"""The record readers of :mod:`gpukb.gemm.triton.results` and step 12's two page tables, checked against the raw
JSON and against a small stream-K record written here with the cases the committed one lacks: a tiling whose tiles
fill whole rounds, a missing time, a stream-K trial without its plain twin, a product with no stream-K trial and no
cuBLAS time. Torch-free and cheap (no page render beyond the two small tables)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpukb.gemm.pages.triton import (
    triton_mid_candidates,
    triton_mid_pairs,
    triton_streamk_choices,
    triton_streamk_pairs,
    triton_swap_by_choice,
    triton_swap_holdout,
)
from gpukb.gemm.triton import results
from gpukb.records import RESULTS_DIR_VARIABLE, results_dir

STREAMK_JSON = results_dir() / "gemm" / "triton-gemm-tuning-h100-streamk.json"


def _edited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: dict, records: dict[str, list]) -> None:
    """Each of ``records`` (a name: its products) written as a copy of the record ``raw`` holding those products, under
    ``tmp_path``'s ``gemm/`` (the id ``gemm/<name>``), and records read from there."""
    (tmp_path / "gemm").mkdir(exist_ok=True)
    for name, classes in records.items():
        (tmp_path / "gemm" / f"{name}.json").write_text(json.dumps({**raw, "classes": classes}), encoding="utf-8")
    monkeypatch.setenv(RESULTS_DIR_VARIABLE, str(tmp_path))


def _cells(markdown: str) -> list[list[str]]:
    """The body rows of a pipe table, cell by cell."""
    lines = [line for line in markdown.splitlines() if line.startswith("|")][2:]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]


def test_the_readers_refuse_a_record_of_another_kind() -> None:
    # gemm/triton-gemm-h100 is the kernel record (TritonGemm), not a tuning record
    for read in (results.fill_alternatives, results.streamk_pairs, lambda i: results.class_trials(i, "NN", (1, 1, 1))):
        with pytest.raises(ValueError, match=r"holds a 'gemm\.triton-gemm' record; expected 'gemm\.triton-tuning'"):
            read("gemm/triton-gemm-h100")
    with pytest.raises(TypeError, match=r"^record_id must be"):
        results.streamk_pairs(3)  # type: ignore[arg-type]


def test_class_trials_names_the_classes_a_record_tuned() -> None:
    raw = json.loads(STREAMK_JSON.read_text(encoding="utf-8"))
    tuned = sorted({(c["layout"], tuple(c["shape"])) for c in raw["classes"]})
    assert len(tuned) == 6
    assert tuned[0] == ("NN", (2304, 768, 3072))
    with pytest.raises(ValueError, match=re.escape(f"tuned no class on TT (1, 2, 3); it tuned {tuned}")):
        results.class_trials(results.STREAMK_TABLE_ID, "TT", (1, 2, 3))


def test_no_shared_tiles_no_contributors() -> None:
    assert results._streamk_contributors(0, 47, 132) == 0  # tiles filling whole rounds: nobody shares one


def test_sweep_changes_skip_unmatched_and_unmeasured_rows() -> None:
    sweep = results.sweep_committed(results.SWEEP_RULES_ID)
    first = next(i for i, r in enumerate(sweep.rows) if r.sweep == "first" and r.ratio is not None)
    assert results.sweep_changes(sweep, sweep, threshold=0.0) == []  # the same ratio has not moved by more than 0
    assert results.sweep_changes(sweep.model_copy(update={"rows": []}), sweep) == []  # nothing before: no pair
    rows = list(sweep.rows)
    rows[first] = rows[first].model_copy(update={"ratio": None})
    assert results.sweep_changes(sweep, sweep.model_copy(update={"rows": rows}), threshold=0.0) == []


def test_arc_steps_name_each_change_and_its_record() -> None:
    steps = results.arc_steps()
    assert [s.change for s in steps] == [c for c, _ in results.ARC_CONFIGS] + [c for c, _ in results.ARC_SWEEPS]
    assert [s.record for s in steps] == ["gemm/triton-gemm-h100"] * 4 + [r for _, r in results.ARC_SWEEPS]
    # the tiny products are left out of the means, though the sweep records time them in bf16
    raw = json.loads((results_dir() / f"{results.SWEEP_RULES_ID}.json").read_text(encoding="utf-8"))
    assert any(r["sweep"] == "tiny" and r["dtype"] == "bfloat16" for r in raw["rows"])
    assert not any("tiny" in s.sweeps for s in steps)
    kernel = results.committed()
    empty = kernel.model_copy(update={"sweep": kernel.sweep.model_copy(update={"configs": []})})
    label = results.ARC_CONFIGS[0][1].label
    with pytest.raises(ValueError, match=re.escape(f"has no 4096³ and 8192³ result for {label!r}")):
        results.arc_steps(empty)


@pytest.fixture
def odd_streamk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A two-product stream-K record: 16896×256 (132 tiles of 128×256: whole rounds) without the plain time of
    one pair and the plain twin of another stream-K trial; 896×4864×7503 with no stream-K trial and no cuBLAS time."""
    raw = json.loads(STREAMK_JSON.read_text(encoding="utf-8"))
    whole, none = raw["classes"][0], raw["classes"][1]
    whole["shape"] = [16896, 256, 3000]
    whole["trials"] = [whole["trials"][i] for i in (0, 1, 2, 4)]  # 4: stream-K 128×256×64 3 stages, its twin (3) gone
    whole["trials"][1]["ms"] = None
    none["trials"] = [t for t in none["trials"] if not t["config"].get("stream_k")]
    none["cublas_ms"] = None
    _edited(tmp_path, monkeypatch, raw, {"streamk-odd": [whole, none]})
    return "gemm/streamk-odd"


def test_streamk_tables_show_what_is_missing(odd_streamk: str) -> None:
    pairs = results.streamk_pairs(odd_streamk)
    shown = [(p.shape, p.tiles, p.shared, p.contributors, p.plain_ms) for p in pairs]
    assert shown == [((16896, 256, 3000), 132, 0, 0, None)]
    assert _cells(triton_streamk_pairs(odd_streamk)) == [[
        "NN 16896×256×3000", f"`{pairs[0].config.label}`", "132 (1 whole rounds)", "none (whole rounds)", "–",
        "140.8", "–", "82.5",
    ]]  # fmt: skip
    choices = results.streamk_choices(odd_streamk)
    assert [(c.best_stream_k, c.best_stream_k_ms) for c in choices][1] == (None, None)
    rows = _cells(triton_streamk_choices(odd_streamk))
    # 3000-class times from the record: chosen 0.123968 ms, cuBLAS 0.082464 ms (ratio 0.665), best stream-K 0.139536
    assert rows[0][1:2] + rows[0][3:5] + rows[0][6:] == ["82.5", "124.0", "0.665", "139.5", "0.591"]
    assert rows[1][1:2] + rows[1][3:] == ["–", "148.4", "–", "–", "–", "–"]
    # no cuBLAS time: no ratio, for each of the product's six timed tilings
    assert [t.ratio for t in results.class_trials(odd_streamk, "TN", (896, 4864, 7503))] == [None] * 6


def _trial(entry: dict, kernel: str, tile: tuple[int, int, int], stages: int, fused: bool, split: int | None) -> dict:
    """A copy of the one plain (not transposed) trial of ``entry`` with that tiling."""
    (found,) = [
        t for t in entry["trials"]
        if (t["config"]["kernel"], t["config"]["block_m"], t["config"]["block_n"], t["config"]["block_k"])
        == (kernel, *tile) and t["config"]["num_stages"] == stages and bool(t["config"].get("fused_reduce")) == fused
        and not t["config"].get("swap_ab") and t["split_k"] == split and t["config"].get("split_k") in (None, split)
    ]  # fmt: skip
    return json.loads(json.dumps(found))


@pytest.fixture
def odd_fill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A three-class fill record: 896×3072×8192 first (M above 64), then two decode classes with no transposed
    trial: 64×768×768 (M = 64) whose best 16-row and 64-row times tie, and whose 16×64×128 pair ties at 2 slices;
    40×768×768 whose 16×64×128 pair was timed at one slice only."""
    raw = json.loads((results_dir() / f"{results.FILL_TABLE_ID}.json").read_text(encoding="utf-8"))
    src = next(c for c in raw["classes"] if c["shape"] == [40, 768, 768])
    tie = json.loads(json.dumps(src)) | {"shape": [64, 768, 768]}
    tie["trials"] = [
        _trial(src, "tma", (64, 32, 128), 4, False, None),
        _trial(src, "splitk", (16, 32, 256), 4, True, 1),
        _trial(src, "splitk", (16, 64, 128), 4, True, 2),
        _trial(src, "splitk", (16, 64, 128), 4, False, 2),
    ]
    tie["trials"][1]["ms"] = tie["trials"][0]["ms"] = 0.007248  # 16-row and 64-row: the same time
    tie["trials"][2]["ms"] = tie["trials"][3]["ms"] = 0.0092  # one launch and two kernels: the same time
    one = json.loads(json.dumps(src))
    one["trials"] = [
        _trial(src, "splitk", (16, 32, 256), 4, True, 1),
        _trial(src, "splitk", (64, 16, 256), 4, False, 1),
        _trial(src, "splitk", (16, 64, 128), 4, True, 1),
        _trial(src, "splitk", (16, 64, 128), 4, False, 1),
    ]
    odd = [next(c for c in raw["classes"] if c["shape"][0] > 64), tie, one]
    # and a record that timed the fill candidates only cut into K slices (16×64×128 in two, one launch)
    _edited(tmp_path, monkeypatch, raw, {"fill-odd": odd, "fill-split-only": [tie | {"trials": tie["trials"][2:3]}]})
    return "gemm/fill-odd"


def test_fill_summary_counts_decode_classes_up_to_64_rows_and_no_ties(odd_fill: str) -> None:
    tie, one = results.fill_alternatives(odd_fill)[1:]
    assert (tie.earlier_ms, tie.narrow_ms, tie.swapped_ms) == (0.007248, 0.007248, None)
    assert (tie.split, tie.fused_ms, tie.unfused_ms) == (2, 0.0092, 0.0092)
    assert (one.narrow_ms, one.split, one.fused_ms, one.unfused_ms) == (0.007055999943986535, None, None, None)
    # two decode classes (M = 64 and 40); only 40's 16-row best (7.056 µs) beats its 64-row best (7.312 µs); both
    # fastest candidates store directly (a tma tiling; one slice); the tied pair at 2 slices is no one-launch win;
    # no transposed trial: no gap
    assert results.fill_summary(odd_fill) == results.FillSummary(2, 1, 2, {2: (1, 0)}, 0.0)
    (split_only,) = results.fill_alternatives("gemm/fill-split-only")  # a split fill candidate is one too
    assert (split_only.best_split, split_only.best_ms) == (2, 0.0092)


def test_the_two_block_reader_refuses_what_is_not_its_record() -> None:
    # a tuning record of another step (stream-K: no tile of two blocks), an id that is not a string, a path
    message = (
        "gemm/triton-gemm-tuning-h100-streamk: NN (3000, 3000, 3000) lacks a timed tiling of one block, a tile of two "
        "blocks or the 192×128 tile flattened and not"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        results.two_block_rows("gemm/triton-gemm-tuning-h100-streamk")
    for bad in (None, 1, True, float("nan")):
        with pytest.raises(TypeError, match=r"^record_id must be a string"):
            results.two_block_rows(bad)
    with pytest.raises(ValueError, match=r"^a record id is a path like"):
        results.two_block_rows("/dev/null")
    rows = results.two_block_rows()
    assert [r.shape[0] for r in rows][:2] == [896, 1170]  # the record's order
    assert all(r.one_block_ms > 0 and r.two_block.two_part and not r.one_block.two_part for r in rows)


def test_the_token_reader_reads_a_product_whose_rows_were_padded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # rows off 128-byte lines: the look-up's choice pads them, and tuning.token_trials gives every candidate its
    # pad_rows; the reader must find 128×128, 64×256 and the tall tiles padded too
    raw = json.loads((results_dir() / "gemm" / "triton-gemm-tuning-h100-tokens.json").read_text(encoding="utf-8"))
    entry = raw["classes"][0]
    for trial in entry["trials"]:
        trial["config"]["pad_rows"] = True
    entry["config"]["pad_rows"] = True
    raw["classes"] = [entry]
    plain = results.token_rows()[0]
    _edited(tmp_path, monkeypatch, raw, {"tokens-padded": raw["classes"]})
    (row,) = results.token_rows("gemm/tokens-padded")
    assert (row.tall_128x128_ms, row.wide_64x256_ms, row.one_row_ms, row.two_rows_ms) == (
        plain.tall_128x128_ms, plain.wide_64x256_ms, plain.one_row_ms, plain.two_rows_ms
    )  # fmt: skip
    assert (row.one_row.pad_rows, row.two_rows.pad_rows, row.chosen.pad_rows) == (True, True, True)


def test_the_token_and_default_readers_refuse_what_is_not_their_record() -> None:
    # a tuning record of another step, an id that is not a string, a path; and a multiprocessor count
    for reader, other, message in (
        (results.token_rows, "gemm/triton-gemm-tuning-h100-twoblock",
         "gemm/triton-gemm-tuning-h100-twoblock: TN (896, 4864, 7503) lacks a timed 128×128, 64×256, or tall tile in "
         "one row and in two rows of tiles"),
        (results.default_rows, "gemm/triton-gemm-tuning-h100-tokens",
         "gemm/triton-gemm-tuning-h100-tokens: NN (297, 14336, 4096) lacks a timed look-up choice or default tiling"),
    ):  # fmt: skip
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            reader(other)
        for bad in (None, 1, True, float("nan")):
            with pytest.raises(TypeError, match=r"^record_id must be a string"):
                reader(bad)
        with pytest.raises(ValueError, match=r"^a record id is a path like"):
            reader("/tmp")
    for sms in (0, -1, 1.5, True):
        with pytest.raises((TypeError, ValueError), match=r"^sms must be"):
            results.default_rows(sms=sms)
    rows = results.default_rows()
    assert (len(rows), sum(r.ruled for r in rows)) == (47, 11)
    assert all(r.rounds >= 4 for r in rows if r.ruled)
    # on a GPU of twice the multiprocessors the rounds halve, and the rule takes the default on fewer products
    assert sum(r.ruled for r in results.default_rows(sms=264)) < 11


def test_default_rows_read_step_17s_record_only_and_rule_whatever_its_switch() -> None:
    # three other tuning records time the default tiling on every product too: the fourth tuning run's (its first
    # trial is the default itself), step 12's and step 14's (the look-up's choice among other candidates)
    from gpukb.gemm.triton import tuning

    for other in ("gemm/triton-gemm-tuning-h100-gaps", "gemm/triton-gemm-tuning-h100-streamk",
                  "gemm/triton-gemm-tuning-h100-twoblock"):  # fmt: skip
        with pytest.raises(ValueError, match=f"^{re.escape(other)}: .* timed other trials than step 17's"):
            results.default_rows(other)
    # `ruled` is what the rule does, not whether choose applies it (a run without the rule read 0 of 11)
    tuning.use_rule("many_rounds", False)
    try:
        assert sum(r.ruled for r in results.default_rows()) == 11
    finally:
        tuning.use_rule("many_rounds", True)


def test_the_token_reader_counts_a_tile_as_tall_as_m_as_one_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 297×14336×4096's trials as if the product had 320 rows: its 320-row tiles then hold M in one row exactly
    raw = json.loads((results_dir() / "gemm" / "triton-gemm-tuning-h100-tokens.json").read_text(encoding="utf-8"))
    entry = raw["classes"][0]
    assert entry["shape"][0] == 297
    entry["shape"][0] = 320
    raw["classes"] = [entry]
    _edited(tmp_path, monkeypatch, raw, {"tokens-320": raw["classes"]})
    (row,) = results.token_rows("gemm/tokens-320")
    assert row.one_row.block_m == 320
    assert row.two_rows.block_m == 192


def test_the_token_split_reader_reads_step_18s_record_only() -> None:
    message = (
        "gemm/triton-gemm-tuning-h100-tokens: NN (297, 14336, 4096) is not a product step 18 timed (a timed split-K "
        "choice, then tuning.token_split_trials)"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        results.token_split_rows("gemm/triton-gemm-tuning-h100-tokens")
    for bad in (None, 7, float("nan")):
        with pytest.raises(TypeError, match=r"^record_id must be a string"):
            results.token_split_rows(bad)
    rows = results.token_split_rows()
    assert (len(rows), sum(r.ruled for r in rows)) == (25, 7)
    assert all(r.split.kernel == "splitk" and r.slices >= 1 for r in rows)


def test_the_token_split_reader_refuses_a_product_without_trials_or_a_timed_persistent_tiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the run records a failed trial without a time: the reader raised KeyError for an untimed 64×128 tiling, and
    # IndexError for a product with no trials
    raw = json.loads((results_dir() / "gemm" / "triton-gemm-tuning-h100-tokensplit.json").read_text(encoding="utf-8"))
    entry = raw["classes"][0]
    assert entry["shape"] == [159, 768, 3072]
    untimed = json.loads(json.dumps(entry))
    for trial in untimed["trials"]:
        if trial["config"]["kernel"] == "tma" and trial["config"]["block_n"] == 128:
            trial["ms"], trial["error"] = None, "failed"
    _edited(tmp_path, monkeypatch, raw, {"untimed": [untimed], "no-trials": [{**entry, "trials": []}]})
    with pytest.raises(
        ValueError, match=r"^gemm/untimed: NT \(159, 768, 3072\) lacks a timed persistent 64×128 tiling$"
    ):
        results.token_split_rows("gemm/untimed")
    with pytest.raises(ValueError, match=r"^gemm/no-trials: NT \(159, 768, 3072\) is not a product step 18 timed"):
        results.token_split_rows("gemm/no-trials")


def test_the_default_reader_refuses_a_product_without_trials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = json.loads((results_dir() / "gemm" / "triton-gemm-tuning-h100-default.json").read_text(encoding="utf-8"))
    raw["classes"] = [{**raw["classes"][0], "trials": []}]
    _edited(tmp_path, monkeypatch, raw, {"no-trials": raw["classes"]})
    shape = tuple(raw["classes"][0]["shape"])
    message = f"gemm/no-trials: {raw['classes'][0]['layout']} {shape} lacks a timed look-up choice or default tiling"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        results.default_rows("gemm/no-trials")


def test_the_swap_reader_reads_step_19s_record_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = results.swap_rows()
    assert len(rows) == 75
    assert all(r.swapped.swap_ab and r.swapped_ms > 0 for r in rows)
    assert sum(r.same_ms is not None for r in rows) == 30
    # the first run's record timed other swapped tiles (all on the two-block kernel): not step 19's trials now
    with pytest.raises(ValueError, match=r"^gemm/triton-gemm-tuning-h100-swap-two-block-kernel: NT \(159, 768, 3072\) "
                                         r"is not a product step 19 timed"):  # fmt: skip
        results.swap_rows("gemm/triton-gemm-tuning-h100-swap-two-block-kernel")
    for bad in (None, 7, float("nan")):
        with pytest.raises(TypeError, match=r"^record_id must be a string"):
            results.swap_rows(bad)  # type: ignore[arg-type]
    raw = json.loads((results_dir() / "gemm" / "triton-gemm-tuning-h100-swap.json").read_text(encoding="utf-8"))
    entry = raw["classes"][0]
    untimed = json.loads(json.dumps(entry))
    for trial in untimed["trials"][1:]:
        trial["ms"], trial["error"] = None, "failed"
    _edited(tmp_path, monkeypatch, raw, {"untimed": [untimed], "no-trials": [{**entry, "trials": []}]})
    with pytest.raises(ValueError, match=r"^gemm/untimed: NT \(159, 768, 3072\) has no timed swapped tile$"):
        results.swap_rows("gemm/untimed")
    with pytest.raises(ValueError, match=r"^gemm/no-trials: NT \(159, 768, 3072\) is not a product step 19 timed"):
        results.swap_rows("gemm/no-trials")


def test_the_swap_readers_refuse_a_record_they_would_misread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # edited copies of step 19's record: before, no product divided by zero in the leave-one-out, a zero time or
    # cuBLAS time divided by zero or read as a ratio of 0.000, an N of 0 failed on its logarithm ("math domain error"),
    # a product twice was its own nearest product, and fp16 was counted as bf16
    raw = json.loads((results_dir() / "gemm" / "triton-gemm-tuning-h100-swap.json").read_text(encoding="utf-8"))
    first, second = raw["classes"][:2]

    def edited(change: dict | None = None, trial: dict | None = None) -> dict:
        entry = json.loads(json.dumps(first)) | (change or {})
        entry["trials"][0] |= trial or {}
        return entry

    records = {
        "empty": ([], r"holds no product"),
        "zero-time": ([edited(trial={"ms": 0.0}), second], r"classes\[0\]\.trials\[0\]\.ms: Input should be greater"),
        "zero-cublas": ([edited({"cublas_ms": 0.0}), second], r"classes\[0\]\.cublas_ms: Input should be greater"),
        "no-columns": ([edited({"shape": [159, 0, 3072]}), second], r"NT \(159, 0, 3072\) is not a product step 19"),
        "twice": ([first, second, first], r"NT \(159, 768, 3072\) is in the record twice"),
        "fp16": ([second, edited({"dtype": "float16"})], r"NT \(159, 768, 3072\) is float16; step 19 timed bfloat16"),
    }
    _edited(tmp_path, monkeypatch, raw, {name: classes for name, (classes, _) in records.items()})
    for name, (_, message) in records.items():
        for read in (results.swap_rows, results.swap_leave_one_out, triton_swap_holdout):
            with pytest.raises(ValueError, match=message):
                read(f"gemm/{name}")


def test_step_19s_choices_are_named_by_their_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a blocked choice was grouped as "persistent", a swapped one with the plain tile of its shape
    raw = json.loads((results_dir() / "gemm" / "triton-gemm-tuning-h100-swap.json").read_text(encoding="utf-8"))
    entries = [json.loads(json.dumps(raw["classes"][0])) for _ in range(2)]
    choices = (
        {"kernel": "blocked", "block_m": 64, "block_n": 64, "block_k": 32},
        {"kernel": "tma", "block_m": 64, "block_n": 128, "block_k": 64, "num_stages": 4, "swap_ab": True},
    )
    for entry, choice, n in zip(entries, choices, (768, 1024), strict=True):
        entry["shape"][1] = n
        entry["trials"][0]["config"] = entry["config"] = choice
    _edited(tmp_path, monkeypatch, raw, {"choices": entries})
    kinds = {line.split("|")[1].strip() for line in triton_swap_by_choice("gemm/choices").splitlines()[2:]}
    assert kinds == {"blocked 64×64", "persistent 64×128 swapped"}


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"same_class": 1}, TypeError, "same_class must be True or False; got 1"),
        ({"margin": float("nan")}, ValueError, "margin must be"),
        ({"margin": -0.1}, ValueError, "margin must be"),
        ({"margin": 1.5}, ValueError, "margin must be"),
        ({"margin": "0.02"}, TypeError, "margin must be"),
        ({"record_id": "gemm/triton-gemm-tuning-h100-tokens"}, ValueError, "gemm/triton-gemm-tuning-h100-tokens: NN"),
    ],
)
def test_the_swap_leave_one_out_refuses_what_it_does_not_model(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        results.swap_leave_one_out(**kwargs)


def test_the_mid_reader_reads_step_20s_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = results.mid_rows()
    assert len(rows) == 58
    assert all(r.chosen in r.times and r.ruled in r.times for r in rows)
    assert sum(r.ruled != r.chosen for r in rows) == 11
    assert all(r.times[r.fastest] == min(r.times.values()) for r in rows)
    # step 19's record timed other trials on other rows
    with pytest.raises(ValueError, match=r"^gemm/triton-gemm-tuning-h100-swap: NT \(159, 768, 3072\) is not a product "
                                         r"step 20 timed"):  # fmt: skip
        results.mid_rows("gemm/triton-gemm-tuning-h100-swap")
    with pytest.raises(TypeError, match=r"^record_id must be a string"):
        results.mid_rows(None)  # type: ignore[arg-type]
    raw = json.loads((results_dir() / "gemm" / "triton-gemm-tuning-h100-mid.json").read_text(encoding="utf-8"))
    first, second = raw["classes"][:2]
    ruled = next(e for e in raw["classes"] if tuple(e["shape"]) == (1314, 1024, 4096))
    untimed = json.loads(json.dumps(ruled))
    for trial in untimed["trials"]:
        if trial["config"]["block_m"] == 64 and trial["config"]["block_n"] == 256:
            trial["ms"], trial["error"] = None, "failed"
    records = {
        "empty": ([], r"holds no product"),
        "twice": ([first, second, first], r"NT \(322, 13824, 5120\) is in the record twice"),
        "fp16": ([second, first | {"dtype": "float16"}], r"NT \(322, 13824, 5120\) is float16; step 20 timed bfloat16"),
        "short": ([first | {"shape": [320, 13824, 5120]}], r"NT \(320, 13824, 5120\) is not a product step 20 timed"),
        "untimed": ([untimed], r"NT \(1314, 1024, 4096\): the rule's 'tma 64x256x64 g8 s4 w4' has no time"),
    }
    _edited(tmp_path, monkeypatch, raw, {name: classes for name, (classes, _) in records.items()})
    for name, (_, message) in records.items():
        for read in (results.mid_rows, results.mid_by_count):
            with pytest.raises(ValueError, match=message):
                read(f"gemm/{name}")


@pytest.mark.parametrize(
    ("margin", "error", "message"),
    [(-0.1, ValueError, "margin must be"), (1.5, ValueError, "margin must be"), (float("nan"), ValueError,
     "margin must be"), ("5 %", TypeError, "margin must be"), (True, TypeError, "margin must be")],
)  # fmt: skip
def test_the_count_of_work_on_step_20s_record_refuses_a_bad_margin(margin, error, message) -> None:
    with pytest.raises(error, match=f"^{message}"):
        results.mid_by_count(margin=margin)


def test_step_20s_pairs_table_says_where_no_product_timed_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a record mid_rows accepts whose one product's choice is 128×128 at 5 stages: the pair against the look-up's own
    # 128×64 choices had no product, and the table raised statistics' "no median for empty data"
    raw = json.loads((results_dir() / "gemm" / "triton-gemm-tuning-h100-mid.json").read_text(encoding="utf-8"))
    entry = next(e for e in raw["classes"] if tuple(e["shape"]) == (1314, 1024, 4096))
    _edited(tmp_path, monkeypatch, raw, {"one": [entry]})
    rows = _cells(triton_mid_pairs("gemm/one"))
    assert [row[2] for row in rows] == ["1 of 1", "1 of 1", "1 of 1", "0 of 0"]
    assert rows[3][3:] == ["–", "–"]
    assert all(re.fullmatch(r"×\d\.\d{3}", row[3]) for row in rows[:3])


def test_step_20s_tables_read_candidates_timed_with_the_choices_pad_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tuning.mid_trials times every candidate with the choice's pad_rows; on a record whose choices pad their rows the
    # candidates table said each candidate "failed on every product" and the pairs table "0 of 0"
    candidates, pairs = triton_mid_candidates(), triton_mid_pairs()
    raw = json.loads((results_dir() / "gemm" / "triton-gemm-tuning-h100-mid.json").read_text(encoding="utf-8"))
    for entry in raw["classes"]:
        for config in (entry["config"], *(t["config"] for t in entry["trials"])):
            config["pad_rows"] = True
    _edited(tmp_path, monkeypatch, raw, {"pad": raw["classes"]})
    assert all(r.chosen.pad_rows for r in results.mid_rows("gemm/pad"))
    assert triton_mid_candidates("gemm/pad") == candidates
    assert triton_mid_pairs("gemm/pad") == pairs


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"after_id": True}, TypeError, "record must be a sweep record's id or a TritonGemmSweep; got bool"),
        ({"before_id": 3.5}, TypeError, "record must be a sweep record's id or a TritonGemmSweep; got float"),
        ({"sweep": "tokens"}, ValueError, "gemm/triton-gemm-sweep-h100-mid-rows-direct-two-block runs no bf16 product "
                                          "of 'tokens' on tiles of two blocks"),
        ({"sweep": float("nan")}, ValueError, "sweep must be one of"),
        ({"before_id": "gemm/triton-gemm-tuning-h100-mid"}, ValueError,
         "results file 'gemm/triton-gemm-tuning-h100-mid' holds a 'gemm.triton-tuning' record"),
    ],
)  # fmt: skip
def test_the_two_block_host_table_refuses_what_it_cannot_compare(kwargs: dict, error: type, message: str) -> None:
    # a bool for a record failed on an attribute; a set with no two-block product printed an empty table
    from gpukb.gemm.pages.triton import triton_two_block_host

    with pytest.raises(error, match=f"^{re.escape(message)}"):
        triton_two_block_host(**kwargs)


def test_the_depth_readers_refuse_a_record_they_would_misread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # edited copies of step 21's record: a product with a K of 0 gave pairs of 0 K steps, which no band of the page's
    # table holds (it printed a table of no rows), and one with an N of 0 was read as a product step 21 timed; a
    # record none of whose tilings was timed at both depths printed an empty table too
    from gpukb.gemm.pages.triton import triton_depth_by_steps, triton_depth_rule

    raw = json.loads((results_dir() / f"{results.DEPTH_TABLE_ID}.json").read_text(encoding="utf-8"))
    first, second = raw["classes"][:2]
    untimed = json.loads(json.dumps(first))
    for trial in untimed["trials"][1:]:
        trial["ms"], trial["error"] = None, "failed"
    records = {
        "no-depth": ([second, first | {"shape": [276, 151936, 0]}], r"NT \(276, 151936, 0\) is not a product step 21"),
        "no-columns": ([first | {"shape": [276, 0, 896]}], r"NT \(276, 0, 896\) is not a product step 21 timed"),
        "untimed": ([untimed], r"^gemm/untimed: holds no tiling timed at both its own depth and its deepest"),
    }
    _edited(tmp_path, monkeypatch, raw, {name: classes for name, (classes, _) in records.items()})
    for name, (_, message) in records.items():
        reads = (results.depth_pairs, triton_depth_by_steps)
        reads += () if name == "untimed" else (results.depth_rule, triton_depth_rule)  # its rule is scored
        for read in reads:
            with pytest.raises(ValueError, match=message):
                read(f"gemm/{name}")
    assert results.depth_rule("gemm/untimed").products == 1  # the rule keeps its choice: scored on its own time


@pytest.mark.parametrize(
    ("outcomes", "margin", "error", "match"),
    [
        ([], 0.02, ValueError, r"^outcomes must be a non-empty list"),
        (None, 0.02, ValueError, r"^outcomes must be a non-empty list"),
        ([(1.0,)], 0.02, TypeError, r"^each outcome must be a \(gain, changed\) pair"),
        ([(float("nan"), True)], 0.02, ValueError, r"^gain must be a finite number; got nan$"),
        ([(0.0, True)], 0.02, ValueError, r"^gain must be"),
        ([(-1.0, False)], 0.02, ValueError, r"^gain must be"),
        ([("1.0", True)], 0.02, TypeError, r"^gain must be a real number"),
        ([(1.0, 1)], 0.02, TypeError, r"^changed must be True or False"),
        ([(1.0, True)], -0.1, ValueError, r"^margin must be"),
        ([(1.0, True)], True, TypeError, r"^margin must be a real number"),
    ],
)
def test_a_rule_score_refuses_what_it_cannot_score(outcomes, margin, error, match) -> None:
    with pytest.raises(error, match=match):
        results.RuleScore.of(outcomes, margin)


def test_a_rule_score_counts_changes_by_the_margin_and_means_every_product() -> None:
    score = results.RuleScore.of([(1.5, True), (0.5, True), (1.01, True), (2.0, False)])
    assert (score.products, score.changed, score.faster, score.slower) == (4, 3, 1, 1)
    assert score.mean_gain == pytest.approx((1.5 * 0.5 * 1.01 * 2.0) ** 0.25)

"""The Triton GEMM's tuning table: shape classes, the rule for classes the table lacks, the look-up's fallbacks, and
the committed table (made by ``bench/triton_gemm_sweep.py`` on the H100). Torch-free."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import replace

import pytest

from gpukb.cuda import limits
from gpukb.gemm.triton import tuning
from gpukb.gemm.triton.configs import DEFAULT_CONFIGS, SMALL_CONFIGS, Config, shared_memory_model, split_for, tail_rows
from gpukb.gemm.triton.tuning import K_EDGES, M_EDGES, N_EDGES, GemmTuning, ShapeClass, Trial, TunedClass
from gpukb.records import results_dir


@pytest.fixture
def table() -> Iterator[None]:
    """Restore the committed table after a test that sets another."""
    yield
    tuning._ACTIVE.clear()


def test_buckets_and_their_labels() -> None:
    assert [tuning.bucket(x, M_EDGES) for x in (1, 16, 17, 64, 65, 4096, 4097, 10**6)] == [0, 0, 1, 1, 2, 5, 6, 6]
    assert [tuning.bucket_label(i, M_EDGES) for i in range(7)] == [
        "≤ 16", "17–64", "65–256", "257–512", "513–1024", "1025–4096", "> 4096"
    ]  # fmt: skip
    cls = ShapeClass.of("bfloat16", "NN", 8, 14336, 4096)
    assert (cls.m, cls.n, cls.k) == (0, 2, 1)
    assert cls.label == "bfloat16 NN, M ≤ 16, N 4097–16384, K 1025–4096"
    assert tuning.bucket(128256, N_EDGES) == len(N_EDGES)
    assert tuning.bucket(65536, K_EDGES) == len(K_EDGES)


@pytest.mark.usefixtures("table")
def test_the_rule_for_classes_the_table_lacks() -> None:
    small_m = tuning.heuristic("bfloat16", 8, 4096, 4096, 132)
    assert (small_m.kernel, small_m.block_m, small_m.block_k) == ("splitk", 64, 128)
    assert tuning.heuristic("float8_e4m3fn", 1, 4096, 4096, 132).block_k == 256
    k_heavy = tuning.heuristic("float16", 512, 512, 16384, 132)  # 8 large tiles, K 32 times M
    assert (k_heavy.kernel, k_heavy.block_m, k_heavy.block_n) == ("splitk", 128, 128)
    assert tuning.heuristic("bfloat16", 8192, 8192, 8192, 132) == DEFAULT_CONFIGS["bfloat16"]
    # 32 large tiles: the 64×128 tiling with the deep pipeline, whose rate the tables measured (0.90 of the large)
    assert tuning.heuristic("bfloat16", 1024, 1024, 1024, 132) == tuning.WAVE_LADDER[1]
    tuning.use_table(None)  # no table, no measured rates: the first sweep's two tilings
    assert tuning.heuristic("bfloat16", 1024, 1024, 1024, 132) == SMALL_CONFIGS["bfloat16"]
    assert tuning.heuristic("float8_e4m3fn", 4096, 4096, 4096, 132).kernel == "tma"


def test_candidates_for_small_m_have_64_row_tiles() -> None:
    assert {c.block_m for c in tuning.candidates("bfloat16", 64)} == {64}
    assert {c.block_m for c in tuning.candidates("float8_e4m3fn", 1)} == {64}
    assert tuning.candidates("bfloat16", 65) == tuning.CANDIDATES_16
    assert all(c.block_k == 128 or c.block_k == 256 for c in tuning.CANDIDATES_FP8)  # one-byte elements: deep K


def test_trials_add_half_and_twice_the_automatic_split() -> None:
    tried = tuning.trials("bfloat16", 512, 512, 16384, 132)
    assert tried[: len(tuning.CANDIDATES_16)] == tuning.CANDIDATES_16
    extra = tried[len(tuning.CANDIDATES_16) :]
    splitk = [c for c in tuning.CANDIDATES_16 if c.kernel == "splitk"]
    for config in splitk:
        auto = split_for(512, 512, 16384, config, 132)
        assert {c.split_k for c in extra if c.block_m == config.block_m and c.block_n == config.block_n
                and c.block_k == config.block_k} == {auto // 2, 2 * auto} - {0}  # fmt: skip
    assert tuning.trials("bfloat16", 8192, 8192, 8192, 132) == tuning.CANDIDATES_16  # no split anywhere


def test_candidates_for_long_fp8_products() -> None:
    assert tuning.candidates("bfloat16", 3000, 3000) == tuning.CANDIDATES_16
    long = tuning.candidates("float8_e4m3fn", 4096, 4096 + 128)
    assert {c.fp8_imprecise_acc for c in long} == {tuning.FP8_PROMOTE}
    assert {c.fp8_imprecise_acc for c in tuning.candidates("float8_e4m3fn", 4096, 4096)} == {None}
    assert tuning.heuristic("float8_e4m3fn", 8192, 8192, 8192, 132).fp8_imprecise_acc == tuning.FP8_PROMOTE
    assert tuning.heuristic("float8_e4m3fn", 8192, 8192, 4096, 132).fp8_imprecise_acc is None


@pytest.mark.usefixtures("table")
def test_unaligned_rows_take_their_own_class_never_the_aligned_one() -> None:
    blocked = Config("blocked", 128, 256, 64, num_stages=3)
    aligned = _entry("bfloat16", "NN", (2048, 2048, 2048), [(LARGE, 1.0)])
    tuning.use_table(_table(aligned))
    assert tuning.lookup("bfloat16", "NN", 3000, 3000, 3000, 132, aligned=False) is None  # no class of its group
    unaligned = _entry("bfloat16", "NN", (3000, 3000, 3000), [(LARGE, 1.0), (blocked, 0.8)], aligned=False)
    tuning.use_table(_table(aligned, unaligned))
    assert tuning.lookup("bfloat16", "NN", 3000, 3000, 3000, 132, aligned=False) == blocked
    assert tuning.lookup("bfloat16", "NN", 3008, 3008, 3008, 132) == LARGE  # aligned rows: the aligned class
    # 6000-byte rows start on 16-byte boundaries only; 4000-byte ones (2000 columns) on 32-byte sectors
    assert unaligned.shape_class.label.endswith(", rows not 128-byte aligned nor on 32-byte sectors")
    assert not unaligned.shape_class.sectors
    # 2000³ (rows on sectors) has no class of its own: it takes 3000³'s (off sectors) before the aligned one
    assert tuning.lookup("bfloat16", "NN", 2000, 2000, 2000, 132, aligned=False, sectors=True) == blocked
    on_sectors = _entry("bfloat16", "NN", (2000, 2000, 2000), [(LARGE, 1.0), (blocked, 1.2)], aligned=False)
    assert on_sectors.shape_class.label.endswith(", rows not 128-byte aligned")
    tuning.use_table(_table(aligned, unaligned, on_sectors))
    assert tuning.lookup("bfloat16", "NN", 2000, 2000, 2000, 132, aligned=False, sectors=True) == LARGE
    assert tuning.lookup("bfloat16", "NN", 3000, 3000, 3000, 132, aligned=False, sectors=False) == blocked


def test_sectors_of_contiguous_operands() -> None:
    assert tuning.contiguous_sectors("bfloat16", "NN", 2000, 2000, 2000)  # 4000-byte rows
    assert not tuning.contiguous_sectors("bfloat16", "NN", 3000, 3000, 3000)  # 6000-byte rows
    assert not tuning.contiguous_sectors("bfloat16", "TN", 3000, 4096, 4096)  # A.T: rows of M = 3000
    assert tuning.contiguous_sectors("bfloat16", "NN", 4095, 4097, 4099)  # rows not 16-byte aligned: copied
    assert tuning.contiguous_sectors("float8_e4m3fn", "TT", 3000, 4096, 4096)  # fp8 A column-major: copied
    assert not tuning.contiguous_sectors("bfloat16", "TT", 3000, 4096, 4096)  # a 16-bit one is read in place


def _entry(
    dtype: str,
    layout: str,
    shape: tuple[int, int, int],
    trials: list[tuple[Config, float]],
    aligned: bool = True,
) -> TunedClass:
    cls = ShapeClass.of(dtype, layout, *shape)
    best = min(trials, key=lambda t: t[1])[0]
    return TunedClass(
        dtype=dtype, layout=layout, m_bucket=cls.m, n_bucket=cls.n, k_bucket=cls.k, aligned=aligned, shape=shape,
        config=best, trials=[Trial(config=c, split_k=None, ms=ms) for c, ms in trials], cublas_ms=None,
    )  # fmt: skip


def _table(*entries: TunedClass) -> GemmTuning:
    return GemmTuning.model_construct(edges={}, timing="", classes=list(entries))


LARGE = Config("tma", 128, 256, 64, num_stages=4, epilogue_subtile=True)
MEDIUM = Config("tma", 128, 128, 64, num_stages=4)


def test_efficiency_counts_rounds_of_tiles_and_their_area() -> None:
    assert tuning.efficiency(4096, 4096, 4096, LARGE, 132) == pytest.approx(512 / (4 * 132))  # 3.9 rounds take 4
    assert tuning.efficiency(3000, 3000, 3000, LARGE, 132) == pytest.approx(
        288 / (3 * 132) * 3000 * 3000 / (24 * 128 * 12 * 256)
    )
    # The page's figures for 3000³: 288 large tiles in 3 rounds (2.2 rounds of work), 576 medium ones in 5 (4.4).
    from gpukb.gemm.triton.configs import waves

    assert (waves(3000, 3000, LARGE, 132), waves(3000, 3000, MEDIUM, 132)) == (3, 5)
    assert (round(24 * 12 / 132, 1), round(24 * 24 / 132, 1)) == (2.2, 4.4)
    split = Config("splitk", 64, 128, 128, num_warps=4)
    assert tuning.efficiency(1, 4096, 4096, split, 132) == pytest.approx(32 * 4 / 132 / 64)  # 4 slices, 1 row


@pytest.mark.usefixtures("table")
def test_a_class_picks_by_predicted_time_on_the_shape_itself() -> None:
    # Timed on 4096³: the large tiles 10% faster there. On 3000³ they take 3 rounds for 2.2 rounds of work.
    entry = _entry("bfloat16", "NN", (4096, 4096, 4096), [(LARGE, 1.0), (MEDIUM, 1.1)])
    tuning.use_table(_table(entry))
    tuning.use_rule("two_blocks", False)  # the class's own choice (step 15's rule after it: its own tests)
    assert tuning.choose("bfloat16", "NN", 4096, 4096, 4096, 132) == LARGE  # the representative: measured order
    assert tuning.predicted_ms(entry, entry.trials[0], 4096, 4096, 4096, 132) == pytest.approx(1.0)
    assert tuning.choose("bfloat16", "NN", 3000, 3000, 3000, 132) == MEDIUM
    large_3000 = tuning.predicted_ms(entry, entry.trials[0], 3000, 3000, 3000, 132)
    medium_3000 = tuning.predicted_ms(entry, entry.trials[1], 3000, 3000, 3000, 132)
    assert medium_3000 < large_3000


@pytest.mark.usefixtures("table")
def test_lookup_falls_back_to_the_sharing_type_then_the_rule_never_to_another_layout() -> None:
    nt = Config("tma", 64, 128, 64, num_warps=4)
    tuning.use_table(
        _table(
            _entry("bfloat16", "NN", (4096, 4096, 4096), [(LARGE, 1.0)]),
            _entry("bfloat16", "NT", (512, 4096, 4096), [(nt, 1.0)]),
        )
    )
    tuning.use_rule("two_blocks", False)  # the class's own choice (step 15's rule after it: its own tests)
    assert tuning.lookup("bfloat16", "NN", 3000, 3000, 3000, 132) == LARGE  # same buckets as 4096³
    assert tuning.lookup("bfloat16", "TT", 3000, 3000, 3000, 132) is None  # no TT entry: not the NN one
    assert tuning.choose("bfloat16", "TT", 3000, 3000, 3000, 132) == tuning.heuristic("bfloat16", 3000, 3000, 3000, 132)
    assert tuning.lookup("float16", "NT", 300, 2000, 2000, 132) == nt  # fp16 takes bf16's entries
    assert tuning.lookup("float8_e4m3fn", "NT", 4096, 4096, 4096, 132) is None  # fp8 shares with no one
    assert tuning.choose("float8_e4m3fn", "NT", 4096, 4096, 4096, 132) == tuning.heuristic(
        "float8_e4m3fn", 4096, 4096, 4096, 132
    )
    tuning.use_table(None)
    assert tuning.choose("bfloat16", "NN", 4096, 4096, 4096, 132) == DEFAULT_CONFIGS["bfloat16"]


def _raw_table(record_id: str) -> dict:
    path = results_dir().joinpath(*f"{record_id}.json".split("/"))
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.usefixtures("table")
@pytest.mark.parametrize("record_id", tuning.TABLE_RECORDS)
def test_each_committed_table_is_the_fastest_candidate_of_each_class(record_id: str) -> None:
    record = tuning.committed(record_id)
    raw = _raw_table(record_id)  # read independently of the model
    extended = record_id.endswith("-issue29")  # the second run tried the extended candidates
    losers = record_id.endswith("-losers")  # the third, those and the split-tail and decode candidates
    gaps = record_id.endswith("-gaps")  # the fourth, those and the gap candidates, on ten designed shapes
    fill = record_id.endswith("-fill")  # the fifth, 16-row and one-launch split-K tilings, on sixteen designed shapes
    assert raw["kind"] == "gemm.triton-tuning"
    assert raw["edges"] == {"m": list(M_EDGES), "n": list(N_EDGES), "k": list(K_EDGES)}
    assert record.run.gpu is not None
    assert record.run.gpu.name == "NVIDIA H100 80GB HBM3"
    assert len(raw["classes"]) == len(record.classes) >= (10 if extended or gaps or fill else 20)
    flags = {"extended": extended, "losers": losers, "gaps": gaps, "fill": fill}
    classes = set()
    for entry in raw["classes"]:
        m, n, k = entry["shape"]
        cls = ShapeClass.of(entry["dtype"], entry["layout"], m, n, k, entry["aligned"])
        assert (cls.m, cls.n, cls.k, cls.tiny) == (
            entry["m_bucket"], entry["n_bucket"], entry["k_bucket"], entry.get("tiny", False)
        )  # fmt: skip
        assert cls not in classes
        classes.add(cls)
        timed = [t for t in entry["trials"] if t["ms"] is not None]
        assert timed, entry["shape"]
        assert entry["config"] == min(timed, key=lambda t: t["ms"])["config"]
        tried = [Config(**t["config"]) for t in entry["trials"]]
        assert tried == list(tuning.trials(entry["dtype"], m, n, k, 132, aligned=entry["aligned"], **flags))
        for trial in entry["trials"]:  # the split each split-K trial used: its own, or the rule's
            config = Config(**trial["config"])
            if config.kernel == "splitk":
                assert trial["split_k"] == split_for(m, n, k, config, 132), trial
            if config.split_tail:
                assert trial["split_k"] == tail_rows(m, n, k, config, 132)[1], trial
    assert {c.shape_class: c.config for c in record.classes} == record.table()


@pytest.mark.usefixtures("table")
def test_the_active_table_is_the_later_run_over_the_earlier() -> None:
    tuning._ACTIVE.clear()
    active = tuning.active_table()
    assert active is not None
    fifth, fourth, third, second, first = (tuning.committed(r).table() for r in tuning.TABLE_RECORDS)
    assert {cls: entry.config for cls, entry in active.items()} == {**first, **second, **third, **fourth, **fifth}
    assert not set(fourth) & (set(first) | set(second) | set(third))  # the fourth run tuned only empty classes
    # the fifth re-tuned decode classes of the second and third (M ≤ 64); its classes above 64 rows were empty
    again = set(fifth) & (set(first) | set(second) | set(third) | set(fourth))
    assert again
    assert all(cls.m <= tuning.SMALL_M_BUCKET for cls in again)
    assert set(third) & set(first)  # the third run re-tuned classes of the first (3000³, rows off sectors) ...
    assert set(third) & set(second)  # ... and of the second (issue 29's products)
    # 2000³ (rows on 32-byte sectors) keeps the second run's class; 3000³ (rows on 16-byte boundaries) has its own.
    cls = ShapeClass.of("bfloat16", "NN", 3000, 3000, 3000, aligned=False)
    assert active[cls].shape == (2000, 2000, 2000)
    cls = ShapeClass.of("bfloat16", "NN", 3000, 3000, 3000, aligned=False, sectors=False)
    assert active[cls].shape == (3000, 3000, 3000)
    # Split-tail trials are never chosen (they lost wherever they split): the class's plain best instead.
    assert not any(tuning.choose("bfloat16", c.layout, *c.shape, 132).split_tail for c in active.values())
    assert tuning.choose("bfloat16", "NN", 3, 5, 7, 132).kernel == "blocked"  # the tiny class
    assert tuning.choose("float16", "TT", 60, 60, 60, 132) == active[ShapeClass.of("bfloat16", "NN", 3, 5, 7)].config


def test_tiny_products_are_one_class_and_empty_ones_divide_by_nothing() -> None:
    tiny = ShapeClass.of("bfloat16", "NT", 3, 5, 7)
    assert tiny == ShapeClass.of("bfloat16", "NT", 100, 100, 100) != ShapeClass.of("bfloat16", "NT", 128, 128, 64)
    assert tiny.label == "bfloat16 NT, tiny (M·N·K < 2^20)"
    assert tuning.heuristic("bfloat16", 0, 5, 7, 132).kernel == "blocked"  # no tile counting for an empty product
    assert split_for(0, 5, 7, Config("splitk", 64, 64, 64), 132) == 1
    assert {c.kernel for c in tuning.candidates("bfloat16", 3, 7, tiny=True)} == {"blocked", "tma", "splitk"}


@pytest.mark.usefixtures("table")
def test_a_missing_class_borrows_a_neighbour_one_bucket_away() -> None:
    entry = TunedClass(
        dtype="bfloat16", layout="NN", m_bucket=5, n_bucket=1, k_bucket=1, shape=(2048, 2048, 2048),
        config=DEFAULT_CONFIGS["bfloat16"], cublas_ms=None,
        trials=[Trial(config=DEFAULT_CONFIGS["bfloat16"], split_k=None, ms=0.03),
                Trial(config=SMALL_CONFIGS["bfloat16"], split_k=None, ms=0.05)],
    )  # fmt: skip
    tuning.use_table(GemmTuning.model_construct(classes=[entry]))
    assert tuning.lookup("bfloat16", "NN", 2048, 2048, 8192, 132) is not None  # K one bucket up
    assert tuning.lookup("bfloat16", "NT", 2048, 2048, 8192, 132) is None  # never in another layout
    # nor where the representative's operands were copied and the product's are not (or the other way round)
    assert tuning.lookup("bfloat16", "NN", 2048, 2048, 8192, 132, copied=True) is None
    assert tuning.lookup("bfloat16", "NN", 2048, 2048, 8195, 132) is None  # A's rows of 16390 bytes: copied
    assert tuning.lookup("bfloat16", "NN", 2048, 2048, 65536, 132) is None  # two buckets: the rule instead
    tuning.use_table(GemmTuning.model_construct(classes=[entry.model_copy(update={"m_bucket": 2})]))
    assert tuning.lookup("bfloat16", "NN", 100, 2048, 2048, 132) is not None  # M 65–256: its own bucket
    assert tuning.lookup("bfloat16", "NN", 64, 2048, 2048, 132) is None  # never into or out of the small-M path


def test_the_sweep_is_declared_for_gpukb_bench() -> None:
    from gpukb.gemm.triton import sweep as matmul_sweep
    from gpukb.measuring.counting import gemm_bytes
    from gpukb.measuring.pairs import registry

    pairs = {name: registry().pairs[f"triton-gemm-sweep-{name}"] for name in ("bf16", "fp16", "fp8")}
    assert pairs["fp8"].peer == "torch._scaled_mm (use_fast_accum=False)"
    assert pairs["bf16"].peer == pairs["fp16"].peer == "torch.matmul (cuBLAS)"
    assert len(pairs["bf16"].cases) == len(matmul_sweep.shapes()) >= 30
    assert "4095x4097x4099" in pairs["bf16"].cases
    assert "1x128256x4096" in pairs["bf16"].cases
    assert all(all(int(x) % 16 == 0 for x in case.split("x")) for case in pairs["fp8"].cases)
    assert pairs["fp8"].nbytes("4096x4096x4096") == gemm_bytes(4096, 4096, 4096, a_bytes=1, c_bytes=2)


def test_records_write_pad_rows_only_where_it_is_set() -> None:
    # Records written before the field existed must read and write back unchanged.
    plain, padded = Config("tma", 128, 256, 64), Config("tma", 128, 256, 64, pad_rows=True)
    trials = [Trial(config=c, split_k=None, ms=1.0).model_dump(mode="json")["config"] for c in (plain, padded)]
    assert "pad_rows" not in trials[0]
    assert trials[1]["pad_rows"] is True
    assert [Config(**t) for t in trials] == [plain, padded]
    assert plain.as_dict() == trials[0]
    assert padded.label.endswith(" pad")


BF16 = DEFAULT_CONFIGS["bfloat16"]


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((512, 11008, 4096, BF16, 0), ValueError, "sms must be an int ≥ 1; got 0"),
        ((-512, 11008, 4096, BF16, 132), ValueError, r"m must be an int ≥ 0, ≤ 9223372036854775807; got -512"),
        ((10**100, 11008, 4096, BF16, 132), ValueError, "m must be an int ≥ 0"),  # it looped
        ((True, 11008, 4096, BF16, 132), TypeError, r"m must be an int .*; got True \(bool\)"),
        ((512, 11008, 4096, "bf16", 132), TypeError, "config must be a gpukb.gemm.triton.configs.Config; got str"),
    ],
)
def test_round_counts_refuse_what_they_do_not_model(args, error, match) -> None:
    with pytest.raises(error, match=match):
        tail_rows(*args)
    with pytest.raises(error, match=match):
        split_for(*args)


def test_tail_rows_of_a_huge_product_is_counted_at_once() -> None:
    # only tails of at most sms / 2 tiles are tried: 2^62 rows took for ever when every split was
    config = DEFAULT_CONFIGS["bfloat16"]
    assert tail_rows(2**62, 11008, 4096, config, 132) == (2**62, 1)
    assert tail_rows(512, 11008, 4096, config, 132) == (384, 3)  # the docstring's example


def test_copies_of_contiguous_operands() -> None:
    assert tuning.contiguous_copied("bfloat16", "NN", 1023, 1025, 1027)  # A's rows: 2054 bytes
    assert not tuning.contiguous_copied("bfloat16", "TN", 1024, 4096, 1800)  # rows of 2048 and 8192 bytes
    assert not tuning.contiguous_copied("bfloat16", "NN", 3000, 3000, 3000)  # 6000 bytes: read in place
    assert tuning.contiguous_copied("bfloat16", "NT", 2, 4096, 1001)  # B = Wᵀ: W's rows of 2002 bytes
    assert not tuning.contiguous_copied("bfloat16", "NN", 1, 4096, 1001)  # A of one row; B's rows 8192 bytes
    assert tuning.contiguous_copied("float8_e4m3fn", "NN", 4096, 4096, 4096)  # fp8 B not K-major
    assert not tuning.contiguous_copied("float8_e4m3fn", "NT", 4096, 4096, 4096)


def _ladder_entry(shape: tuple[int, int, int], rates: tuple[float, ...], layout: str = "NN") -> TunedClass:
    """A class timed on ``shape`` where the large tiling and each tiling of the wave ladder keep the GPU full:
    each runs at ``rates[i]`` of the large tiling's rate per busy slot."""
    m, n, k = shape
    trials = [(LARGE, 1.0)]
    for config, rate in zip(tuning.WAVE_LADDER, rates, strict=True):
        ratio = tuning.efficiency(m, n, k, LARGE, 132) / tuning.efficiency(m, n, k, config, 132)
        trials.append((config, ratio / rate))
    return _entry("bfloat16", layout, shape, trials)


@pytest.mark.usefixtures("table")
def test_wave_rates_come_from_classes_that_filled_the_gpu() -> None:
    tuning.use_table(_table(_ladder_entry((4096, 4096, 4096), (0.92, 0.9, 0.86))))
    rates = tuning.wave_rates()
    assert rates[LARGE.label] == 1.0
    assert [round(rates[c.label], 6) for c in tuning.WAVE_LADDER] == [0.92, 0.9, 0.86]
    # a class whose large tiles leave the GPU part-empty (1024³: 32 tiles) says nothing of a full GPU's rate
    tuning.use_table(_table(_ladder_entry((1024, 1024, 1024), (0.5, 0.5, 0.5))))
    assert tuning.wave_rates() == {LARGE.label: 1.0}
    tuning._ACTIVE.clear()  # the committed tables: each ladder tiling measured on a full GPU, below the large one
    committed = tuning.wave_rates()
    assert all(0.5 < committed[c.label] < 1.0 for c in tuning.WAVE_LADDER)


@pytest.mark.usefixtures("table")
def test_a_choice_made_on_a_full_gpu_is_refilled_on_an_under_filled_one() -> None:
    # Timed on 4096³ (512 large tiles): the large tiling fastest. 1200×2048 in large tiles is 80 tiles for 132
    # multiprocessors; in 64×128 tiles 304, 2.3 rounds: 0.77 of their slots busy at 0.9 of the rate.
    tuning.use_table(_table(_ladder_entry((4096, 4096, 4096), (0.92, 0.9, 0.86), layout="NT")))
    tuning.use_rule("two_blocks", False)  # refill alone (step 15's and step 20's rules after it: their own tests)
    tuning.use_rule("mid_tiles", False)
    assert tuning.choose("bfloat16", "NT", 4096, 4096, 4096, 132) == LARGE  # the representative: as measured
    assert tuning.choose("bfloat16", "NT", 3072, 4096, 2048, 132) == LARGE  # 192 tiles: not under-filled
    assert tuning.choose("bfloat16", "NT", 1200, 2048, 2048, 132) == tuning.WAVE_LADDER[1]
    assert tuning.refill(LARGE, (4096, 4096, 4096), 1200, 2048, 2048, 132) == tuning.WAVE_LADDER[1]
    # where the ladder runs slower than its fill gains, the class's choice stays
    tuning.use_table(_table(_ladder_entry((4096, 4096, 4096), (0.7, 0.7, 0.7), layout="NT")))
    tuning.use_rule("two_blocks", False)
    assert tuning.choose("bfloat16", "NT", 1200, 2048, 2048, 132) == LARGE
    # a choice measured on an under-filled representative is kept: its time already counts the empty slots
    assert tuning.refill(LARGE, (1024, 1024, 1024), 1200, 2048, 2048, 132) == LARGE
    split = Config("splitk", 128, 128, 64)
    assert tuning.refill(split, (4096, 4096, 4096), 1200, 2048, 2048, 132) == split  # split-K: its own split rule
    assert tuning.refill(LARGE, (4096, 4096, 4096), 64, 2048, 2048, 132) == LARGE  # the small-M path


@pytest.mark.usefixtures("table")
def test_a_product_without_a_class_in_its_layout_takes_the_rule_not_a_copied_class() -> None:
    # The committed tables: a TN product whose buckets only an NN class (1023×1025×1027, operands always copied)
    # covers takes a TN class one bucket away, never that one.
    tuning._ACTIVE.clear()
    table = tuning.active_table()
    assert table is not None
    nn = table.get(ShapeClass.of("bfloat16", "NN", 1000, 2000, 1800))
    assert nn is not None
    assert tuning._copied(nn)
    assert ShapeClass.of("bfloat16", "TN", 1000, 2000, 1800) not in table
    config = tuning.choose("bfloat16", "TN", 1000, 2000, 1800, 132)
    assert config != nn.config
    assert config.kernel == "tma"


def test_tiny_products_have_a_short_k() -> None:
    assert all(tuning.is_tiny(*shape) for shape in ((3, 5, 7), (100, 100, 100), (8, 500, 256)))
    assert not tuning.is_tiny(1, 800, 800)  # 640,000 multiply-adds, but a chain of 25 K steps of 32
    assert not ShapeClass.of("bfloat16", "NN", 1, 800, 800).tiny
    assert tuning.heuristic("bfloat16", 1, 800, 800, 132).kernel == "splitk"  # the small-M path
    assert tuning.heuristic("bfloat16", 8, 500, 256, 132).kernel == "blocked"


@pytest.mark.parametrize(
    ("n", "k", "block_n", "split"),
    [
        (4096, 4096, 64, 1),  # 64 tiles of 64 columns: half of 132 already
        (896, 4864, 64, 4),  # 14 tiles: four slices (each ≥ 4 K steps of 128)
        (800, 800, 64, 1),  # 13 tiles, but K has one slice of four steps
        (14336, 4096, 128, 1),  # 112 tiles 128 wide: at least half the multiprocessors
    ],
)
def test_the_small_m_rule(n: int, k: int, block_n: int, split: int) -> None:
    config = tuning.small_m_rule(n, k, 132)
    assert (config.kernel, config.block_m, config.block_n, config.split_k) == ("splitk", 64, block_n, split)
    assert 2 * -(-n // block_n) * split <= 132 or split == 1


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: tuning.is_tiny(-1, 5, 7), ValueError, "m must be an int ≥ 0"),
        (lambda: tuning.is_tiny(1, 5.0, 7), TypeError, "n must be an int"),
        (lambda: tuning.contiguous_copied("bfloat16", "NX", 1, 2, 3), ValueError, "unknown layout 'NX'"),
        (lambda: tuning.contiguous_copied(None, "NN", 1, 2, 3), TypeError, "dtype must be a string"),
        (lambda: tuning.small_m_rule(4096, 4096, 0), ValueError, "sms must be an int ≥ 1; got 0"),
        (lambda: tuning.small_m_rule(True, 4096, 132), TypeError, "n must be an int"),
        (lambda: tuning.refill("tma", (1, 2, 3), 1, 2, 3, 132), TypeError, "config must be a gpukb"),
        (lambda: tuning.refill(LARGE, (1, 2), 1, 2, 3, 132), TypeError, r"shape must be the representative's"),
        (lambda: tuning.refill(LARGE, (1, 2, -3), 1, 2, 3, 132), ValueError, "shape k must be an int ≥ 0"),
        (lambda: tuning.refill(LARGE, (1, 2, 3), 10**100, 2, 3, 132), ValueError, "m must be an int ≥ 0"),
        (lambda: tuning.refill(LARGE, (1, 2, 3), 1, 2, 3, 0), ValueError, "sms must be an int ≥ 1"),
    ],
)
def test_the_rules_refuse_what_they_do_not_model(call, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((float("nan"), 1, 1, DEFAULT_CONFIGS["bfloat16"], 132), TypeError, r"m must be an int ≥ 1.*got nan"),
        ((0, 1, 1, DEFAULT_CONFIGS["bfloat16"], 132), ValueError, r"m must be an int ≥ 1.*got 0"),
        ((1, -1, 1, DEFAULT_CONFIGS["bfloat16"], 132), ValueError, r"n must be an int ≥ 1.*got -1"),
        ((1, 1, True, DEFAULT_CONFIGS["bfloat16"], 132), TypeError, r"k must be an int ≥ 0.*got True"),
        ((1, 1, 1, "tma", 132), TypeError, "config must be a Config; got str"),
        ((1, 1, 1, DEFAULT_CONFIGS["bfloat16"], 0), ValueError, "sms must be an int ≥ 1; got 0"),
    ],
)
def test_efficiency_refuses_what_it_does_not_model(args: tuple, error: type, match: str) -> None:
    """A zero or negative size divided by zero, NaN gave NaN, and a bool counted as 1."""
    with pytest.raises(error, match=match):
        tuning.efficiency(*args)


def test_the_small_m_rule_needs_columns() -> None:
    with pytest.raises(ValueError, match=r"n must be an int ≥ 1.*got 0"):  # divided by zero
        tuning.small_m_rule(0, 4096, 132)


# Step 11: weight-bound products carried over by bytes, a borrowed split re-split, the one-launch cap.

FUSED_16 = Config("splitk", 16, 32, 256, num_stages=4, num_warps=4, fused_reduce=True)
SPLIT_64 = Config("splitk", 64, 64, 128, num_stages=5, num_warps=4)


def test_weight_bound_products_are_below_the_ridge_and_mostly_weight() -> None:
    from gpukb.performance.ceilings import h100_ceilings, measured_ridge

    assert tuning._ridge("bfloat16") == measured_ridge(h100_ceilings(), "bf16")
    assert tuning.weight_bound("bfloat16", 17, 768, 768)  # a decode step
    assert tuning.weight_bound("bfloat16", 112, 8192, 8192)  # intensity about 110
    assert tuning.weight_bound("float16", 86, 4096, 32000)
    assert not tuning.weight_bound("bfloat16", 65536, 64, 2048)  # bytes-bound, but the bytes are A's
    assert not tuning.weight_bound("bfloat16", 128, 128, 65536)  # A and B alike
    assert not tuning.weight_bound("bfloat16", 4096, 4096, 4096)  # compute-bound
    assert not tuning.weight_bound("bfloat16", 0, 4096, 4096)  # nothing moved


@pytest.mark.usefixtures("table")
def test_a_weight_bound_product_takes_its_representatives_fastest_with_no_more_work_units() -> None:
    # 40×768×768: 3 × 24 tiles of 16×32, one slice each (72 units), fastest; the same tiles in two slices slower.
    two = replace(FUSED_16, split_k=2)
    entry = _entry("bfloat16", "NT", (40, 768, 768), [(FUSED_16, 7.1e-3), (two, 7.4e-3)])
    entry = entry.model_copy(update={"trials": [entry.trials[0].model_copy(update={"split_k": 1}), entry.trials[1]]})
    tuning.use_table(_table(entry))
    tuning.use_bytes_rules(True)  # off by default (step 11 measured them losing on fresh products)
    # Carried over by rounds of tiles, 17×768×768 (48 tiles) would take the two slices its representative ran slower
    by_rounds = min(entry.trials, key=lambda t: tuning.predicted_ms(entry, t, 17, 768, 768, 132))
    assert by_rounds.config == two
    chosen = tuning.choose("bfloat16", "NT", 17, 768, 768, 132)
    assert chosen == replace(FUSED_16, split_k=1)
    assert tuning.by_bytes(entry, 17, 768, 768, 132) == chosen


def test_by_bytes_cuts_a_split_to_the_representatives_work_units() -> None:
    # 128×128×65536: 4 tiles of 64×64 in 33 slices, 132 units. 86×4096×32000 has 128 such tiles: one slice.
    entry = _entry("bfloat16", "NN", (128, 128, 65536), [(replace(SPLIT_64, split_k=33), 0.026)])
    assert tuning.by_bytes(entry, 86, 4096, 32000, 132).split_k == 1
    assert tuning.by_bytes(entry, 64, 128, 65536, 132).split_k == 33  # 2 tiles: the split as it ran
    assert tuning.by_bytes(entry, 64, 128, 256, 132).split_k == 2  # at least one K step a slice
    tma = _entry("bfloat16", "NN", (128, 128, 65536), [(LARGE, 0.02), (SPLIT_64, 0.03)])
    assert tuning.by_bytes(tma, 86, 4096, 32000, 132) == LARGE  # not split-K: as it is


@pytest.mark.usefixtures("table")
def test_a_borrowed_split_k_is_split_for_the_product() -> None:
    # The class of 128×128×65536 (M 65–256, N ≤ 1024, K > 16384), timed fastest at a fixed 33 slices on 2 tiles;
    # 100×4096×32000 (N one bucket up, 32 tiles of 64×256) borrows it, not weight-bound-matched (the
    # representative streams A as much as B), and takes the split its own tiles give.
    fixed = Config("splitk", 64, 256, 64, num_stages=4, num_warps=4, split_k=33)
    entry = _entry("bfloat16", "NN", (128, 128, 65536), [(fixed, 0.026)])
    tuning.use_table(_table(entry))
    tuning.use_bytes_rules(True)
    assert tuning.choose("bfloat16", "NN", 128, 128, 65536, 132) == fixed  # its own class: as measured
    borrowed = tuning.choose("bfloat16", "NN", 100, 4096, 32000, 132)
    assert borrowed == replace(fixed, split_k=None)
    assert split_for(100, 4096, 32000, borrowed, 132) == 4


def test_the_one_launch_reduction_is_capped_at_two_slices() -> None:
    assert tuning.one_launch_cap(replace(FUSED_16, split_k=2), 4, 1024, 1024, 132).fused_reduce
    four = replace(FUSED_16, split_k=4)
    assert tuning.one_launch_cap(four, 4, 1024, 1024, 132) == replace(four, fused_reduce=False)
    assert not tuning.one_launch_cap(FUSED_16, 4, 1024, 4096, 132).fused_reduce  # automatic split: 4
    assert tuning.one_launch_cap(LARGE, 4, 1024, 4096, 132) == LARGE


def _untimed() -> TunedClass:
    entry = _entry("bfloat16", "NN", (1, 2, 3), [(LARGE, 1.0)])
    return entry.model_copy(update={"trials": [Trial(config=LARGE, split_k=None, ms=None)]})


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: tuning.weight_bound("float32", 1, 2, 3), ValueError, "dtype"),
        (lambda: tuning.weight_bound("bfloat16", -1, 2, 3), ValueError, "m must be an int ≥ 0"),
        (lambda: tuning.weight_bound("bfloat16", 1, 2.0, 3), TypeError, "n must be an int"),
        (lambda: tuning.by_bytes("entry", 1, 2, 3, 132), TypeError, "entry must be a TunedClass; got str"),
        (lambda: tuning.by_bytes(_untimed(), 1, 2, 3, 132), ValueError, "no timed candidate"),
        (lambda: tuning.by_bytes(_entry("bfloat16", "NN", (1, 2, 3), [(LARGE, 1.0)]), 0, 2, 3, 132), ValueError,
         "m must be an int ≥ 1"),
        (lambda: tuning.by_bytes(_entry("bfloat16", "NN", (1, 2, 3), [(LARGE, 1.0)]), 1, 2, 3, 0), ValueError,
         "sms must be an int ≥ 1"),
        (lambda: tuning.one_launch_cap("splitk", 1, 2, 3, 132), TypeError, "config must be a gpukb"),
        (lambda: tuning.one_launch_cap(FUSED_16, 1, -2, 3, 132), ValueError, "n must be an int ≥ 0"),
        (lambda: tuning.one_launch_cap(FUSED_16, 1, 2, 3, 0), ValueError, "sms must be an int ≥ 1"),
    ],
)  # fmt: skip
def test_step_11_rules_refuse_what_they_do_not_model(call, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()


def test_the_bytes_rules_are_off_unless_asked_for() -> None:
    """86×4096×32000 NN: the fourth held-out sweep ran it before step 11's rules with the same tables, at a split of
    33 (its record), which the look-up gives again by default; the rules give it this product's own split.
    use_table turns them off again."""
    raw = json.loads((results_dir() / "gemm" / "triton-gemm-sweep-h100-held-out-4.json").read_text(encoding="utf-8"))
    shape = ("bfloat16", 86, 4096, 32000)
    (before,) = [r["config"] for r in raw["rows"] if (r["dtype"], r["m"], r["n"], r["k"]) == shape]
    tuning._ACTIVE.clear()
    try:
        assert tuning.choose("bfloat16", "NN", 86, 4096, 32000, 132).as_dict() == before
        tuning.use_bytes_rules(True)
        assert tuning.choose("bfloat16", "NN", 86, 4096, 32000, 132).split_k is None
        tuning.use_bytes_rules(False)
        assert tuning.choose("bfloat16", "NN", 86, 4096, 32000, 132).as_dict() == before
        tuning.use_bytes_rules(True)
        tuning.use_table(None)
        assert not tuning._ACTIVE.get("bytes_rules", False)  # off again
        for bad in (1, "no", None):
            with pytest.raises(TypeError, match="on"):
                tuning.use_bytes_rules(bad)
    finally:
        tuning._ACTIVE.clear()


def test_streamk_trials_put_the_look_ups_choice_first_and_pair_each_tiling() -> None:
    chosen = Config("tma", 64, 128, 64, num_stages=6, num_warps=4)
    pool = tuning.streamk_trials(chosen)
    assert pool[:2] == (chosen, replace(chosen, stream_k=True))
    plain = [c for c in pool if not c.stream_k]
    assert {replace(c, stream_k=True) for c in plain} == {c for c in pool if c.stream_k}
    assert len(pool) == len(set(pool)) == 12
    split = Config("splitk", 128, 256, 64, num_stages=3, num_warps=8)  # no stream-K twin: another kernel
    assert tuning.streamk_trials(split)[0] == split
    assert not any(c.kernel == "splitk" and c.stream_k for c in tuning.streamk_trials(split))
    assert not any(c.pad_rows for c in pool)  # an unpadded choice: every candidate reads A and B in place
    for other in ({"split_tail": True}, {"warp_specialize": True}):  # persistent tilings that take no stream-K round
        ws = Config("tma", 128, 128, 64, num_stages=4, num_warps=8, **other)
        assert tuning.streamk_trials(ws)[0] == ws
        twins = sum(c.stream_k for c in tuning.CANDIDATES_16_STREAMK)
        assert sum(c.stream_k for c in tuning.streamk_trials(ws)) == twins  # the candidates' own, none for ``ws``
    padded = Config("tma", 128, 128, 64, num_stages=4, num_warps=8, pad_rows=True)
    assert all(c.pad_rows for c in tuning.streamk_trials(padded))  # every candidate reads A and B as the choice does
    with pytest.raises(TypeError, match=r"chosen must be a gpukb\.gemm\.triton\.configs\.Config; got dict"):
        tuning.streamk_trials({"kernel": "tma"})  # type: ignore[arg-type]


def test_two_block_trials_put_the_look_up_choice_first_and_read_the_operands_as_it_does() -> None:
    chosen = Config("splitk", 64, 128, 128, num_stages=4, num_warps=4, pad_rows=True)
    trials = tuning.two_block_trials(chosen)
    assert trials[0] == chosen
    assert trials[1:] == tuple(replace(c, pad_rows=True) for c in tuning.CANDIDATES_16_TWO_BLOCK)
    assert sum(c.two_part for c in trials) == 7
    # a candidate equal to the look-up's choice is timed once
    assert len(tuning.two_block_trials(tuning.CANDIDATES_16_TWO_BLOCK[0])) == len(tuning.CANDIDATES_16_TWO_BLOCK)
    with pytest.raises(TypeError, match=r"^chosen must be a gpukb\.gemm\.triton\.configs\.Config; got str$"):
        tuning.two_block_trials("tma 192x128x64")


TWO_192x128, TWO_128x192, TWO_192x192 = tuning.TWO_BLOCK_LADDER


def test_two_block_rates_are_step_14s_full_gpu_medians() -> None:
    # (the default's time ÷ its slots' fill) ÷ (the tile's ÷ its fill), on the run's products where both keep 0.9 of
    # their slots busy: 8192³ and Llama-3-8B's MLP up for the tiles of two blocks (4096³ in 192-row tiles: 0.86)
    record = tuning.committed(tuning.TWO_BLOCK_RECORD)
    rates = tuning.two_block_rates()
    default = DEFAULT_CONFIGS["bfloat16"]
    for tile in tuning.TWO_BLOCK_LADDER:
        samples = []
        for entry in record.classes:
            times = {t.config: t.ms for t in entry.trials if t.ms is not None}
            fills = [tuning.efficiency(*entry.shape, c, 132) for c in (default, tile)]
            if min(fills) >= tuning.FULL_FILL and tile in times and default in times:
                samples.append((times[default] / fills[0]) / (times[tile] / fills[1]))
        assert len(samples) == 2
        assert rates[tile.label] == pytest.approx((samples[0] + samples[1]) / 2)
    assert rates[default.label] == 1.0


@pytest.mark.usefixtures("table")
def test_two_blocks_takes_the_tile_that_does_more_work_per_unit_of_time() -> None:
    rates = tuning.two_block_rates()
    tuning.use_table(None)  # the default's rate 1.0 (no table)

    def score(c: Config, m: int, n: int, k: int, rate: float) -> float:
        return tuning.efficiency(m, n, k, c, 132) * rate

    # 3903×768: 93 tiles of 128×256 (0.69 of a round busy) against 126 of 192×128 (0.92 busy, at its rate)
    assert score(LARGE, 3903, 768, 3072, 1.0) < score(TWO_192x128, 3903, 768, 3072, rates[TWO_192x128.label])
    best = max(tuning.TWO_BLOCK_LADDER, key=lambda c: score(c, 3903, 768, 3072, rates[c.label]))
    assert tuning.two_blocks(LARGE, "bfloat16", 3903, 768, 3072, 132) == best
    assert tuning.choose("float16", "NN", 3903, 768, 3072, 132) == best  # the rule after the look-up
    # 4096³ and 8192³: 128×256 keeps 0.97 of its slots busy; no tile of two blocks does more
    for size in (4096, 8192):
        assert tuning.two_blocks(LARGE, "bfloat16", size, size, size, 132) == LARGE
    # where it does not apply, the configuration stays
    for config, dtype, m in ((LARGE, "float8_e4m3fn", 3903), (LARGE, "bfloat16", 64), (TWO_192x128, "bfloat16", 3903),
                             (Config("splitk", 128, 128, 64), "bfloat16", 3903),
                             (replace(LARGE, stream_k=True), "bfloat16", 3903)):  # fmt: skip
        assert tuning.two_blocks(config, dtype, m, 768, 3072, 132) == config
    assert tuning.two_blocks(LARGE, "bfloat16", 3903, 0, 3072, 132) == LARGE  # an empty product
    tuning.use_rule("two_blocks", False)  # choose skips the rule; the rule itself stays what it is
    assert tuning.choose("float16", "NN", 3903, 768, 3072, 132) == LARGE
    assert tuning.two_blocks(LARGE, "bfloat16", 3903, 768, 3072, 132) == best
    tuning.use_table(None)  # turns it on again
    assert tuning.choose("float16", "NN", 3903, 768, 3072, 132) == best


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("128x256", "bfloat16", 3903, 768, 3072, 132), TypeError,
         "config must be a gpukb.gemm.triton.configs.Config; got str"),
        ((LARGE, None, 3903, 768, 3072, 132), TypeError, "dtype must be a string"),
        ((LARGE, "bf16", 3903, 768, 3072, 132), ValueError, "unknown dtype 'bf16'"),
        ((LARGE, "bfloat16", -1, 768, 3072, 132), ValueError, "m must be"),
        ((LARGE, "bfloat16", 3903, float("nan"), 3072, 132), TypeError, "n must be"),
        ((LARGE, "bfloat16", 3903, 768, True, 132), TypeError, "k must be"),
        ((LARGE, "bfloat16", 3903, 768, 3072, 0), ValueError, "sms must be"),
    ],
)  # fmt: skip
def test_two_blocks_refuses_what_it_does_not_model(args, error, message) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        tuning.two_blocks(*args)
    with pytest.raises(TypeError, match=r"^on must be True or False; got .yes. \(str\)$"):
        tuning.use_rule("two_blocks", "yes")


@pytest.mark.parametrize(
    ("m", "sides"),
    [
        (65, (128, 80, 64)),  # one row of tiles: 128 (wgmma blocks) or 80 (64 + 16); two rows: 64
        (126, (128, 64)),  # 128 holds it either way; half of it fits 64
        (156, (192, 160, 128)),
        (185, (192, 128)),  # 192 is also the shortest of the fine sides
        (297, (320, 192)),  # 304 is not two powers of two; 320 = 256 + 64; half is 149 → 192
        (257, (320, 272, 192)),  # half of 257 is 129 rows (two rows of 128 hold only 256): 192
        (320, (320, 192)),
    ],
)
def test_token_tiles_hold_all_the_rows_or_half_of_them(m: int, sides: tuple[int, ...]) -> None:
    tiles = tuning.token_tiles(m)
    assert tuple(dict.fromkeys(c.block_m for c in tiles)) == sides
    for c in tiles:
        area = c.block_m * c.block_n
        assert (c.kernel, c.flatten, c.block_k) == ("tma", False, 64)
        assert area <= tuning.TALL_MAX_AREA
        assert c.block_n in (64, 128, 256)
        assert c.num_warps == (8 if area > 16384 or (area == 16384 and c.block_m > 64) else 4)
        limit = limits.capability("9.0").shared_per_block_optin  # 227 KiB
        smem = c.num_stages * (c.block_m + c.block_n) * 64 * 2 + 2 * area
        assert smem <= limit
        deeper = (c.num_stages + 1) * (c.block_m + c.block_n) * 64 * 2 + 2 * area
        assert c.num_stages == 4 or deeper > limit  # the deepest pipeline that fits
    # every width a side's accumulators allow: 320 rows take 64 and 128 columns, 160 rows all three
    assert [c.block_n for c in tuning.token_tiles(297) if c.block_m == 320] == [64, 128]
    assert [c.block_n for c in tuning.token_tiles(156) if c.block_m == 160] == [64, 128, 256]


def test_token_fine_sides_are_what_the_two_block_kernel_takes() -> None:
    assert tuning.FINE_SIDES == (80, 96, 128, 144, 160, 192, 256, 272, 288, 320)
    assert all(side % 64 == 0 for side in tuning.WGMMA_SIDES)
    for side in range(65, tuning.TOKEN_MAX_M + 1):
        legal = True
        try:
            Config("tma", side, 64, 64)
        except ValueError:
            legal = False
        assert (side in tuning.FINE_SIDES) == (legal and side % 16 == 0)


def test_token_trials_put_the_look_up_choice_first() -> None:
    chosen = Config("tma", 128, 128, 64, num_stages=4, num_warps=8)
    trials = tuning.token_trials(chosen, 297)
    assert trials[0] == chosen
    assert set(trials) == {chosen, *tuning.CANDIDATES_16_TOKENS, *tuning.token_tiles(297)}
    assert len(trials) == len(set(trials))  # the choice, also a candidate, is timed once


@pytest.mark.parametrize(
    ("m", "error", "message"),
    [
        (64, ValueError, "m must be"),  # the small-M path's
        (321, ValueError, "m must be"),
        (float("nan"), TypeError, "m must be"),
        (True, TypeError, "m must be"),
        ("200", TypeError, "m must be"),
    ],
)
def test_token_tiles_refuse_rows_outside_their_class(m: object, error: type, message: str) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        tuning.token_tiles(m)  # type: ignore[arg-type]
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        tuning.token_trials(LARGE, m)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^chosen must be a gpukb\.gemm\.triton\.configs\.Config; got str$"):
        tuning.token_trials("tma", 200)  # type: ignore[arg-type]


@pytest.mark.usefixtures("table")
def test_few_tokens_takes_64_row_tiles_where_they_leave_fewer_rows_of_zeros() -> None:
    tall = Config("tma", 128, 128, 64, num_stages=4, num_warps=8)
    wide = Config("tma", 128, 256, 64, num_stages=4, num_warps=8, epilogue_subtile=True)
    for m in (129, 156, 192, 297, 320):  # M mod 128 from 1 to 64: 64-row tiles end closer to M
        assert tuning.few_tokens(tall, "bfloat16", m) == tuning.TOKEN_TILE
        assert tuning.few_tokens(wide, "float16", m) == tuning.TOKEN_TILE
    for m in (64, 65, 128, 200, 256, 321, 4096):  # outside the class, or the same rows of zeros either way
        assert tuning.few_tokens(tall, "bfloat16", m) == tall
    padded = replace(tall, pad_rows=True)
    assert tuning.few_tokens(padded, "bfloat16", 297) == replace(tuning.TOKEN_TILE, pad_rows=True)
    others = (Config("tma", 128, 64, 64), Config("tma", 64, 128, 64), Config("splitk", 128, 128, 64),
              Config("tma", 192, 128, 64, flatten=False), replace(tall, stream_k=True),
              replace(tall, split_tail=True), replace(tall, warp_specialize=True))  # fmt: skip
    for config in others:
        assert tuning.few_tokens(config, "bfloat16", 297) == config
    assert tuning.few_tokens(tall, "float8_e4m3fn", 297) == tall
    # in choose, after the look-up and step 15's rule: the sixth draw's two products it changes (step 19's rule, which
    # follows, takes swapped tiles for both)
    tuning.use_table(None, merge=False)
    tuning._ACTIVE.clear()  # the committed tables
    # (step 21's rule deepens both: K is 64 K steps)
    assert tuning.choose("bfloat16", "NN", 297, 14336, 4096, 132).label == "tma 160x128x64 g8 s5 w4 swap noflat"
    assert tuning.choose("bfloat16", "NT", 156, 6144, 4096, 132).label == "tma 80x128x64 g8 s7 w4 swap noflat"
    tuning.use_rule("deep_tokens", False)
    assert tuning.choose("bfloat16", "NN", 297, 14336, 4096, 132).label == "tma 160x128x64 g8 s4 w4 swap noflat"
    assert tuning.choose("bfloat16", "NT", 156, 6144, 4096, 132).label == "tma 80x128x64 g8 s4 w4 swap noflat"
    tuning.use_rule("swap_tokens", False)
    assert tuning.choose("bfloat16", "NN", 297, 14336, 4096, 132) == tuning.TOKEN_TILE
    assert tuning.choose("bfloat16", "NT", 156, 6144, 4096, 132) == tuning.TOKEN_TILE
    tuning.use_rule("few_tokens", False)
    assert tuning.choose("bfloat16", "NN", 297, 14336, 4096, 132) == tall
    assert tuning.choose("bfloat16", "NT", 156, 6144, 4096, 132) == replace(tall, num_stages=5)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("128x128", "bfloat16", 297), TypeError, "config must be a gpukb.gemm.triton.configs.Config; got str"),
        ((LARGE, 3, 297), TypeError, "dtype must be a string"),
        ((LARGE, "bf16", 297), ValueError, "unknown dtype 'bf16'; choose one of ['float16', 'bfloat16', 'float8"),
        ((LARGE, "float32", 297), ValueError, "unknown dtype 'float32'"),  # a type the tables never tuned
        ((LARGE, "bfloat16", -1), ValueError, "m must be"),
        ((LARGE, "bfloat16", float("nan")), TypeError, "m must be"),
        ((LARGE, "bfloat16", None), TypeError, "m must be"),
    ],
)  # fmt: skip
def test_few_tokens_refuses_what_it_does_not_model(args, error, message) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        tuning.few_tokens(*args)
    with pytest.raises(TypeError, match=r"^on must be True or False; got 1 \(int\)$"):
        tuning.use_rule("few_tokens", 1)


def test_default_trials_put_the_look_up_choice_first() -> None:
    chosen = Config("tma", 64, 256, 64, num_stages=4, num_warps=4, pad_rows=True)
    trials = tuning.default_trials(chosen)
    assert trials == (chosen, *(replace(c, pad_rows=True) for c in tuning.CANDIDATES_16_DEFAULT))
    assert tuning.CANDIDATES_16_DEFAULT[0] == DEFAULT_CONFIGS["bfloat16"]
    assert tuning.default_trials(LARGE) == tuning.CANDIDATES_16_DEFAULT  # the default, timed once
    with pytest.raises(TypeError, match=r"^chosen must be a gpukb\.gemm\.triton\.configs\.Config; got NoneType$"):
        tuning.default_trials(None)  # type: ignore[arg-type]


@pytest.mark.usefixtures("table")
def test_many_rounds_takes_the_default_where_its_tiles_fill_four_rounds() -> None:
    small = Config("tma", 64, 128, 64, num_stages=6, num_warps=4)
    # 3547×5120: 28 × 20 = 560 tiles of 128×256, over four rounds of 132; 1314×1024: 44 tiles
    assert tuning.many_rounds(small, "bfloat16", 3547, 5120, 5120, 132) == LARGE
    assert tuning.many_rounds(small, "float16", 3547, 5120, 5120, 132) == LARGE
    assert tuning.many_rounds(replace(small, pad_rows=True), "bfloat16", 3547, 5120, 5120, 132) == replace(
        LARGE, pad_rows=True
    )
    # the edge: 4 × 132 = 528 tiles (24 × 22), one fewer, and the same on a GPU of 100 multiprocessors (400 tiles)
    assert tuning.many_rounds(small, "bfloat16", 24 * 128, 22 * 256, 4096, 132) == LARGE
    assert tuning.many_rounds(small, "bfloat16", 24 * 128, 22 * 256 - 256, 4096, 132) == small
    assert tuning.many_rounds(small, "bfloat16", 20 * 128, 20 * 256, 4096, 100) == LARGE
    kept = (
        (small, "bfloat16", 1314, 1024, 4096),  # few rounds
        (small, "bfloat16", 320, 10**6, 4096),  # a few hundred tokens: step 16's class
        (small, "bfloat16", 8192, 8192, 15),  # under 2^30 multiply-adds
        (small, "float8_e4m3fn", 3547, 5120, 5120),
        (Config("tma", 128, 256, 64, num_stages=3, num_warps=8), "bfloat16", 3547, 5120, 5120),  # a 128×256 tiling
    )
    for config, dtype, m, n, k in kept:
        assert tuning.many_rounds(config, dtype, m, n, k, 132) == config
    # in choose, last: the seventh held-out sweep's 3547×5120×5120 (NT), which the look-up gave 64×128 tiles
    assert tuning.choose("bfloat16", "NT", 3547, 5120, 5120, 132) == LARGE
    tuning.use_rule("many_rounds", False)
    assert tuning.choose("bfloat16", "NT", 3547, 5120, 5120, 132) == small
    tuning.use_table(None)  # turns it on again (no table: the rule after the heuristic)
    assert tuning.many_rounds(small, "bfloat16", 3547, 5120, 5120, 132) == LARGE


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("64x128", "bfloat16", 3547, 5120, 5120, 132), TypeError,
         "config must be a gpukb.gemm.triton.configs.Config; got str"),
        ((LARGE, b"bf16", 3547, 5120, 5120, 132), TypeError, "dtype must be a string"),
        ((LARGE, "float32", 3547, 5120, 5120, 132), ValueError, "unknown dtype 'float32'"),
        ((LARGE, "bfloat16", -1, 5120, 5120, 132), ValueError, "m must be"),
        ((LARGE, "bfloat16", 3547, float("inf"), 5120, 132), TypeError, "n must be"),
        ((LARGE, "bfloat16", 3547, 5120, None, 132), TypeError, "k must be"),
        ((LARGE, "bfloat16", 3547, 5120, 5120, 0), ValueError, "sms must be"),
    ],
)  # fmt: skip
def test_many_rounds_refuses_what_it_does_not_model(args, error, message) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        tuning.many_rounds(*args)
    with pytest.raises(TypeError, match=r"^on must be True or False; got None \(NoneType\)$"):
        tuning.use_rule("many_rounds", None)


def test_token_split_trials_time_each_split_k_tiling_at_its_split_and_twice_it() -> None:
    chosen = Config("splitk", 64, 64, 128, num_stages=5, num_warps=4, pad_rows=True)
    trials = tuning.token_split_trials(chosen, 174, 8192, 10240, 132)
    assert trials[0] == chosen
    assert all(c.pad_rows for c in trials)
    for config in tuning.CANDIDATES_16_TOKEN_SPLIT:
        mine = [c for c in trials[1:] if replace(c, split_k=None, pad_rows=False) == config]
        if config.kernel == "splitk":
            auto = split_for(174, 8192, 10240, config, 132)
            assert sorted(c.split_k for c in mine) == [auto, 2 * auto]
        else:
            assert mine == [replace(config, pad_rows=True)]
    # twice the split only where it stays within MAX_SPLIT_K: 100×64 in 64×128 tiles is 2 tiles, split 66 of 132
    few = tuning.token_split_trials(chosen, 100, 64, 2**20, 132)
    first = tuning.CANDIDATES_16_TOKEN_SPLIT[0]
    assert split_for(100, 64, 2**20, first, 132) == 66
    assert [c.split_k for c in few if replace(c, split_k=None, pad_rows=False) == first] == [66]
    bad_arguments = (
        (("tma", 174, 8192, 10240, 132), TypeError), ((chosen, 0, 8192, 10240, 132), ValueError),
        ((chosen, 174, 8192, 10240, 0), ValueError), ((chosen, 174, 8192, True, 132), TypeError),
    )  # fmt: skip
    for bad, error in bad_arguments:
        with pytest.raises(error):
            tuning.token_split_trials(*bad)  # type: ignore[arg-type]


@pytest.mark.usefixtures("table")
def test_token_split_takes_persistent_tiles_for_a_split_k_choice_where_k_is_short_and_tiles_many() -> None:
    split = Config("splitk", 64, 256, 64, num_stages=4, num_warps=4)
    tile = tuning.TOKEN_SPLIT_TILE
    # 108×5120×5120: 2 × 40 = 80 tiles of 64×128, K = 5120
    assert tuning.token_split(split, "bfloat16", 108, 5120, 5120) == tile
    assert tuning.token_split(split, "float16", 108, 5120, 5120) == tile
    assert tuning.token_split(replace(split, pad_rows=True), "bfloat16", 108, 5120, 5120) == replace(
        tile, pad_rows=True
    )
    # the edges: K of 8192 and one step more; 32 tiles (2 × 16) and 30 (2 × 15); 65 and 320 rows, 64 and 321
    assert tuning.token_split(split, "bfloat16", 108, 5120, 8192) == tile
    assert tuning.token_split(split, "bfloat16", 108, 5120, 8193) == split
    assert tuning.token_split(split, "bfloat16", 108, 16 * 128, 4096) == tile
    assert tuning.token_split(split, "bfloat16", 108, 15 * 128, 4096) == split
    for m, taken in ((64, False), (65, True), (320, True), (321, False)):
        assert (tuning.token_split(split, "bfloat16", m, 8192, 4096) == tile) is taken
    for config in (tuning.TOKEN_TILE, LARGE, Config("blocked", 64, 64, 32)):  # not a split-K choice
        assert tuning.token_split(config, "bfloat16", 108, 5120, 5120) == config
    assert tuning.token_split(split, "float8_e4m3fn", 108, 5120, 5120) == split
    # in choose: the seen 108×5120×5120 (NN), whose look-up choice is the split-K kernel (K is 80 K steps: step 21's
    # rule then deepens the tile)
    tuning._ACTIVE.clear()
    assert tuning.choose("bfloat16", "NN", 108, 5120, 5120, 132) == tuning.deepest(tile)
    tuning.use_rule("deep_tokens", False)
    assert tuning.choose("bfloat16", "NN", 108, 5120, 5120, 132) == tile
    tuning.use_rule("token_split", False)
    assert tuning.choose("bfloat16", "NN", 108, 5120, 5120, 132).kernel == "splitk"
    with pytest.raises(TypeError, match=r"^on must be True or False"):
        tuning.use_rule("token_split", "off")


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("splitk", "bfloat16", 108, 5120, 5120), TypeError, "config must be a gpukb.gemm.triton.configs.Config"),
        ((LARGE, "bf16", 108, 5120, 5120), ValueError, "unknown dtype 'bf16'"),
        ((LARGE, "bfloat16", -1, 5120, 5120), ValueError, "m must be"),
        ((LARGE, "bfloat16", 108, None, 5120), TypeError, "n must be"),
        ((LARGE, "bfloat16", 108, 5120, float("nan")), TypeError, "k must be"),
    ],
)  # fmt: skip
def test_token_split_refuses_what_it_does_not_model(args, error, message) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        tuning.token_split(*args)


def test_use_rule_names_the_rules_choose_applies() -> None:
    assert tuning.RULES == (
        "two_blocks", "few_tokens", "token_split", "swap_tokens", "deep_tokens", "mid_tiles", "many_rounds"
    )  # fmt: skip
    assert all(callable(getattr(tuning, name)) for name in tuning.RULES)
    listed = re.escape(
        "['two_blocks', 'few_tokens', 'token_split', 'swap_tokens', 'deep_tokens', 'mid_tiles', 'many_rounds']"
    )
    for bad, error, message in (("tokens", ValueError, f"unknown name 'tokens'; choose one of {listed}"),
                                (None, TypeError, "name must be a string"),
                                ("two_blocks ", ValueError, "unknown name 'two_blocks '")):  # fmt: skip
        with pytest.raises(error, match=f"^{message}"):
            tuning.use_rule(bad, False)  # type: ignore[arg-type]


@pytest.mark.parametrize("m", [65, 90, 126, 156, 185, 297, 320])
def test_swap_tiles_fit_the_rows_in_one_to_four_rows_of_tiles(m: int) -> None:
    tiles = tuning.swap_tiles(m)
    sides = {c.block_m for c in tiles}
    expected = {min(s for s in tuning.SWAP_SIDES if s >= -(-m // rows)) for rows in range(1, 5) if -(-m // rows) <= 192}
    assert sides == expected
    for config in tiles:
        assert config.swap_ab
        assert config.kernel == "tma"
        assert (config.block_n, config.num_warps) in tuning.SWAP_WIDTHS.items()
        assert config.flatten == (not config.two_part)  # one block: the persistent kernel, as the tables' tilings
        assert shared_memory_model(config) <= limits.capability("9.0").shared_per_block_optin
        assert config.num_stages == max(s for s in (range(2, 7) if config.flatten else range(2, 5))
                                        if shared_memory_model(replace(config, num_stages=s))
                                        <= limits.capability("9.0").shared_per_block_optin)  # fmt: skip
    assert tuning.SWAP_SIDES == (16, 32, 48, 64, 80, 96, 128, 144, 160, 192)
    chosen = Config("splitk", 64, 64, 128, num_stages=5, num_warps=4)
    trials = tuning.swap_trials(chosen, m)
    assert trials[0] == chosen
    assert set(trials[1:]) == set(tiles)


@pytest.mark.parametrize(
    ("m", "error"),
    [(64, ValueError), (321, ValueError), (float("nan"), TypeError), (True, TypeError), ("200", TypeError)],
)
def test_swap_tiles_refuse_rows_outside_their_class(m: object, error: type) -> None:
    with pytest.raises(error, match=r"^m must be"):
        tuning.swap_tiles(m)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^chosen must be a gpukb\.gemm\.triton\.configs\.Config; got str"):
        tuning.swap_trials("tma", 200)  # type: ignore[arg-type]


def test_deepest_takes_the_most_stages_that_fit_up_to_sixteen() -> None:
    limit = limits.capability("9.0").shared_per_block_optin
    for config in (Config("tma", 64, 64, 64, num_stages=6, swap_ab=True), Config("tma", 48, 64, 64, swap_ab=True,
                   flatten=False), Config("tma", 144, 128, 64, num_stages=4, swap_ab=True, flatten=False)):  # fmt: skip
        deep = tuning.deepest(config)
        assert deep == replace(config, num_stages=deep.num_stages)
        assert shared_memory_model(deep) <= limit < shared_memory_model(replace(deep, num_stages=deep.num_stages + 1))
    # 64×64: 16,384 bytes a stage and 8,192 for C: 13 stages (221,184 bytes), not 14 (237,568)
    assert tuning.deepest(Config("tma", 64, 64, 64, num_stages=6, swap_ab=True)).num_stages == 13
    assert tuning.deepest(Config("tma", 16, 16, 64)).num_stages == tuning.DEEPEST_STAGES == 16  # capped
    # already as deep as fits, or not a tma tiling: unchanged
    wide = Config("tma", 64, 256, 64, num_stages=4, num_warps=4)
    assert tuning.deepest(wide) == wide
    split = Config("splitk", 64, 64, 128, num_stages=5)
    assert tuning.deepest(split) == split
    with pytest.raises(TypeError, match=r"^config must be a gpukb\.gemm\.triton\.configs\.Config; got str"):
        tuning.deepest("tma")  # type: ignore[arg-type]


@pytest.mark.parametrize("m", [65, 143, 320])
def test_depth_trials_are_the_choice_then_64_and_128_wide_swapped_tiles_deepened(m: int) -> None:
    chosen = Config("tma", 64, 128, 64, num_stages=6, num_warps=4, pad_rows=True)
    trials = tuning.depth_trials(chosen, m)
    assert trials[:2] == (chosen, tuning.deepest(chosen))
    assert len(trials) == len(set(trials))
    tiles = [replace(t, pad_rows=True) for t in tuning.swap_tiles(m)]
    expected = {c for t in tiles if t.block_n == 64 for c in (t, tuning.deepest(t))}
    expected |= {tuning.deepest(t) for t in tiles if t.block_n == 128}
    assert set(trials[2:]) == expected
    assert all(c.pad_rows for c in trials)
    with pytest.raises(ValueError, match=r"^m must be"):
        tuning.depth_trials(chosen, 321)
    with pytest.raises(TypeError, match=r"^chosen must be a gpukb\.gemm\.triton\.configs\.Config; got str"):
        tuning.depth_trials("tma", 200)  # type: ignore[arg-type]


def test_swap_tokens_takes_tall_swapped_tiles_or_32x64_where_step_19_says() -> None:
    wide = Config("tma", 64, 256, 64, num_stages=4, num_warps=4)
    # 297×14336: 280 tiles of 64×256, three rounds; two rows of 160×128, 224 tiles in two
    taken = tuning.swap_tokens(wide, "bfloat16", 297, 14336, 4096, 132)
    assert taken.label == "tma 160x128x64 g8 s4 w4 swap noflat"
    assert tuning.tile_work(297, 14336, taken, 132) <= 0.95 * tuning.tile_work(297, 14336, wide, 132)
    # 310×12288: 240 tiles of 64×256 already fill two rounds: kept
    assert tuning.swap_tokens(wide, "bfloat16", 310, 12288, 3072, 132) == wide
    assert tuning.swap_tokens(replace(wide, pad_rows=True), "float16", 297, 14336, 4096, 132).pad_rows
    # a split-K choice that cuts a short K into slices: 32×64 swapped tiles in one slice
    split = Config("splitk", 64, 256, 64, num_stages=4, num_warps=4, fused_reduce=True)
    assert tuning.swap_tokens(split, "bfloat16", 84, 1024, 1024, 132) == tuning.SWAP_SHORT_TILE
    assert tuning.swap_tokens(split, "bfloat16", 84, 1024, 3072, 132) == split  # K above 2048
    one_slice = replace(split, split_k=1)
    assert tuning.swap_tokens(one_slice, "bfloat16", 84, 1024, 1024, 132) == one_slice
    # what it leaves: other sizes, types, kernels and flags
    for m in (64, 321):
        assert tuning.swap_tokens(wide, "bfloat16", m, 14336, 4096, 132) == wide
    assert tuning.swap_tokens(wide, "float8_e4m3fn", 297, 14336, 4096, 132) == wide
    assert tuning.swap_tokens(wide, "bfloat16", 297, 0, 4096, 132) == wide
    for other in (Config("blocked", 128, 128, 64), Config("tma", 192, 128, 64, flatten=False),
                  replace(wide, stream_k=True), replace(wide, split_tail=True), replace(wide, warp_specialize=True),
                  Config("tma", 64, 128, 64, swap_ab=True)):  # fmt: skip
        assert tuning.swap_tokens(other, "bfloat16", 297, 14336, 4096, 132) == other
    # its count of work: rounds of tiles times area, over a rate of at most 1 (the default tiling's)
    default = tuning.DEFAULT_CONFIGS["bfloat16"]
    assert tuning.tile_work(8192, 8192, default, 132) == 16 * 128 * 256  # 2048 tiles: 16 rounds of 132
    assert tuning.tile_work(128, 256, default, 132) == 128 * 256
    small = Config("tma", 64, 64, 64)
    assert tuning.tile_work(64, 64, small, 132) == pytest.approx(64 * 64 / math.sqrt(32 / (32768 / 384)))


def test_swap_tokens_keeps_a_split_k_choice_whose_k_is_one_slice() -> None:
    # a fixed split_k of 4 on a K of at most one K step: matmul's plan runs one slice (no empty ones), so the choice
    # does not cut K into slices and keeps its kernel (the rule took 32×64 swapped tiles for 65×512×64 before)
    split = Config("splitk", 64, 64, 128, num_stages=5, num_warps=4, split_k=4)
    assert split_for(65, 512, 64, split, 132) == 4
    for k in (0, 1, 64, 128):
        assert tuning.swap_tokens(split, "bfloat16", 65, 512, k, 132) == split
    assert tuning.swap_tokens(split, "bfloat16", 65, 512, 129, 132) == tuning.SWAP_SHORT_TILE  # two slices
    tuning._ACTIVE.clear()  # the committed tables: their choice for 65×512×64 NT is that tiling
    assert tuning.choose("bfloat16", "NT", 65, 512, 64, 132) == split


def test_swap_tokens_tile_work_refuses_what_it_does_not_count() -> None:
    # it counts rounds of whole tiles of a persistent tiling: K slices and shared K steps would be ignored silently
    wide = Config("tma", 64, 256, 64, num_stages=4, num_warps=4)
    for other in (Config("splitk", 64, 64, 64, split_k=8), Config("blocked", 64, 64, 32),
                  replace(wide, stream_k=True), replace(wide, split_tail=True)):  # fmt: skip
        message = "tile_work counts a persistent tiling (the 'tma' kernel without split_tail or stream_k); got "
        with pytest.raises(ValueError, match=f"^{re.escape(message + repr(other.label))}$"):
            tuning.tile_work(297, 14336, other, 132)
    for config in (replace(wide, warp_specialize=True), Config("tma", 160, 128, 64, flatten=False, swap_ab=True)):
        assert tuning.tile_work(297, 14336, config, 132) > 0
    with pytest.raises(TypeError, match=r"^sms must be an int ≥ 1; got 132\.0 \(float\)$"):
        tuning.tile_work(297, 14336, wide, 132.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("64x256", "bfloat16", 297, 14336, 4096, 132), TypeError, "config must be a gpukb.gemm.triton.configs.Config"),
        ((LARGE, "bf16", 297, 14336, 4096, 132), ValueError, "unknown dtype 'bf16'"),
        ((LARGE, "bfloat16", -1, 14336, 4096, 132), ValueError, "m must be"),
        ((LARGE, "bfloat16", 297, 14336, 4096.0, 132), TypeError, "k must be"),
        ((LARGE, "bfloat16", 297, 14336, 4096, 0), ValueError, "sms must be"),
        ((LARGE, "bfloat16", 297, 14336, 4096, True), TypeError, "sms must be"),
    ],
)
def test_swap_tokens_refuses_what_it_does_not_model(args: tuple, error: type, message: str) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        tuning.swap_tokens(*args)


def test_deep_tokens_deepens_persistent_tiles_where_k_is_64_steps_or_more() -> None:
    one_block = Config("tma", 64, 128, 64, num_stages=6, num_warps=4, pad_rows=True)
    swapped = Config("tma", 80, 128, 64, num_stages=4, num_warps=4, flatten=False, swap_ab=True)
    # 64 K steps of 64 and more: the deepest pipeline that fits (8 and 7 stages), everything else kept
    assert tuning.deep_tokens(one_block, "bfloat16", 185, 4096, 4096) == replace(one_block, num_stages=8)
    assert tuning.deep_tokens(swapped, "float16", 156, 6144, 4096) == replace(swapped, num_stages=7)
    assert tuning.deep_tokens(swapped, "bfloat16", 156, 6144, 4033) == replace(swapped, num_stages=7)  # 64 steps
    # fewer K steps, rows outside 65 to 320, an empty N, other types and kernels: kept
    for args in ((185, 4096, 4032), (64, 4096, 8192), (321, 4096, 8192), (185, 0, 8192)):
        assert tuning.deep_tokens(one_block, "bfloat16", *args) == one_block
    assert tuning.deep_tokens(one_block, "float8_e4m3fn", 185, 4096, 8192) == one_block
    others = (Config("splitk", 64, 64, 128, num_stages=5), Config("blocked", 64, 64, 32),
              replace(one_block, warp_specialize=True), replace(one_block, split_tail=True),
              replace(one_block, stream_k=True))  # fmt: skip
    for config in others:
        assert tuning.deep_tokens(config, "bfloat16", 185, 4096, 8192) == config
    wide = Config("tma", 64, 256, 64, num_stages=4, num_warps=4)  # already as deep as fits
    assert tuning.deep_tokens(wide, "bfloat16", 277, 6144, 4096) == wide
    for bad, error in ((("tma", "bfloat16", 185, 4096, 4096), TypeError), ((one_block, "bf16", 185, 4096, 4096),
                       ValueError), ((one_block, "bfloat16", 185, 4096, -1), ValueError),
                       ((one_block, "bfloat16", 185.0, 4096, 4096), TypeError)):  # fmt: skip
        with pytest.raises(error):
            tuning.deep_tokens(*bad)  # type: ignore[arg-type]


def test_mid_tiles_takes_wider_larger_or_persistent_tiles_where_step_20_says() -> None:
    square = Config("tma", 128, 128, 64, num_stages=5, num_warps=8)
    assert tuning.mid_tiles(square, "bfloat16", 1314, 1024, 4096, 132) == tuning.MID_WIDE_TILE
    assert tuning.MID_WIDE_TILE.label == "tma 64x256x64 g8 s4 w4"
    small = Config("tma", 64, 128, 64, num_stages=6, num_warps=4)
    # 768×3072 in 64×128 tiles: 288 tiles, more than one round of 132: 128×192 tiles of two blocks
    assert tuning.mid_tiles(small, "float16", 768, 3072, 4268, 132) == tuning.MID_TWO_BLOCK_TILE
    assert tuning.MID_TWO_BLOCK_TILE.label == "tma 128x192x64 g8 s4 w8 noflat"
    # 1152×896: 126 tiles, one round: kept (and 132 tiles exactly: kept)
    assert tuning.mid_tiles(small, "bfloat16", 1152, 896, 677, 132) == small
    assert tuning._tiles(768, 1408, small) == 132
    assert tuning.mid_tiles(small, "bfloat16", 768, 1408, 677, 132) == small
    assert tuning.mid_tiles(small, "bfloat16", 768, 1408, 677, 131) == tuning.MID_TWO_BLOCK_TILE
    # a split-K choice where step 18's rule would take persistent tiles for fewer rows
    split = Config("splitk", 64, 256, 64, num_stages=4, num_warps=4, split_k=6)
    assert tuning.mid_tiles(split, "bfloat16", 339, 768, 768, 132) == tuning.TOKEN_SPLIT_TILE
    assert tuning.mid_tiles(split, "bfloat16", 362, 5120, 32000, 132) == split  # K above 8192
    assert tuning._tiles(321, 384, tuning.TOKEN_SPLIT_TILE) == 18
    assert tuning.mid_tiles(split, "bfloat16", 321, 384, 768, 132) == split  # 18 tiles, fewer than 32
    # pad_rows carried over
    assert tuning.mid_tiles(replace(square, pad_rows=True), "bfloat16", 1314, 1024, 4096, 132).pad_rows
    assert tuning.mid_tiles(replace(split, pad_rows=True), "bfloat16", 339, 768, 768, 132).pad_rows
    # what it leaves: rows outside 321–2048, rows off 128-byte lines, other types, tilings and flags, an empty N
    for m in (320, 2049):
        assert tuning.mid_tiles(square, "bfloat16", m, 1024, 4096, 132) == square
    assert tuning.mid_tiles(square, "bfloat16", 1314, 1024, 4096, 132, aligned=False) == square
    assert tuning.mid_tiles(square, "bfloat16", 1314, 1024, 4096, 132, copied=True) == square  # A or B copied first
    assert tuning.mid_tiles(square, "bfloat16", 1314, 1020, 4096, 132) == square  # C's rows of 2040 bytes: copied
    assert tuning.mid_tiles(square, "float8_e4m3fn", 1314, 1024, 4096, 132) == square
    assert tuning.mid_tiles(square, "bfloat16", 1314, 0, 4096, 132) == square
    for other in (Config("tma", 128, 256, 64), Config("tma", 128, 64, 64, num_stages=5, num_warps=4),
                  Config("tma", 192, 128, 64, flatten=False), Config("blocked", 128, 128, 64),
                  replace(square, stream_k=True), replace(square, split_tail=True),
                  replace(square, warp_specialize=True), Config("tma", 128, 128, 64, swap_ab=True)):  # fmt: skip
        assert tuning.mid_tiles(other, "bfloat16", 1314, 1024, 4096, 132) == other


def test_choose_applies_mid_tiles_unless_switched_off() -> None:
    tuning._ACTIVE.clear()  # the committed tables: 1314×1024×4096 NT looks up 128×128 tiles
    try:
        assert tuning.choose("bfloat16", "NT", 1314, 1024, 4096, 132) == tuning.MID_WIDE_TILE
        # 1023×1025×1027: A and B copied first (rows of 2054 and 2050 bytes): the look-up's split-K choice kept
        kept = tuning.choose("bfloat16", "NN", 1023, 1025, 1027, 132)
        assert kept.kernel == "splitk"
        assert tuning.choose("bfloat16", "NN", 1023, 1025, 1027, 132, copied=True) == kept
        tuning.use_rule("mid_tiles", False)
        assert tuning.choose("bfloat16", "NT", 1314, 1024, 4096, 132).label == "tma 128x128x64 g8 s5 w8"
    finally:
        tuning.use_rule("mid_tiles", True)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"aligned": None}, "aligned must be True or False; got None (NoneType)"),
        ({"aligned": 1}, "aligned must be True or False; got 1 (int)"),
        ({"sectors": 2}, "sectors must be True or False; got 2 (int)"),
        ({"copied": 1}, "copied must be True or False; got 1 (int)"),
    ],
)
@pytest.mark.parametrize("rules", ["on", "off"])
def test_choose_refuses_a_flag_that_is_not_a_bool_with_any_rule_switched_off(flags, message, rules) -> None:
    # aligned and copied were checked only by step 20's rule: with it off (a --without-mid run), or with aligned True
    # for sectors, choose took aligned=None as False, copied=1 as True and sectors=2 as it came
    try:
        for rule in tuning.RULES:
            tuning.use_rule(rule, rules == "on")
        with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
            tuning.choose("bfloat16", "NT", 1314, 1024, 4096, 132, **flags)
        with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
            tuning.lookup("bfloat16", "NT", 1314, 1024, 4096, 132, **flags)
    finally:
        for rule in tuning.RULES:
            tuning.use_rule(rule, True)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("64x256", "bfloat16", 1314, 1024, 4096, 132), TypeError, "config must be a gpukb.gemm.triton.configs.Config"),
        ((LARGE, "bf16", 1314, 1024, 4096, 132), ValueError, "unknown dtype 'bf16'"),
        ((LARGE, "bfloat16", -1, 1024, 4096, 132), ValueError, "m must be"),
        ((LARGE, "bfloat16", 1314, 1024, float("nan"), 132), TypeError, "k must be"),
        ((LARGE, "bfloat16", 1314, 1024, 4096, 0), ValueError, "sms must be"),
        ((LARGE, "bfloat16", 1314, 1024, 4096, 132, 1), TypeError, "aligned must be True or False; got "),
        ((LARGE, "bfloat16", 1314, 1024, 4096, 132, None), TypeError, "aligned must be True or False; got "),
        ((LARGE, "bfloat16", 1314, 1024, 4096, 132, True, "no"), TypeError, "copied must be True or False; got "),
    ],
)  # fmt: skip
def test_mid_tiles_refuses_what_it_does_not_model(args, error, message) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        tuning.mid_tiles(*args)


def test_step_20s_candidates_fit_shared_memory_but_the_one_that_failed() -> None:
    # the record's 192×160 tile failed at launch on every product: 241,760 bytes asked of the 232,448 a block may have
    limit = limits.capability("9.0").shared_per_block_optin
    over = [c for c in tuning.CANDIDATES_16_MID if c.kernel == "tma" and shared_memory_model(c) > limit]
    assert [c.label for c in over] == ["tma 192x160x64 g8 s4 w8 noflat"]
    assert shared_memory_model(over[0]) == 241664

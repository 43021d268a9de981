"""The tuning rules' exact answers, worked by hand from their documented definitions: the rule for classes the table
lacks (:func:`~gpukb.gemm.triton.tuning.heuristic`) at each of its boundaries, the small-M rule, the weight-bound
test against the ridge point, the refill rule, the look-up's fallbacks (tiny classes of other layouts, a class
whose every candidate split its tail, neighbours of the sharing type and of the same sector alignment) and the
round counts of a split tail. Torch-free."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from gpukb.gemm.triton import tuning
from gpukb.gemm.triton.configs import DEFAULT_CONFIGS, Config, pick_by_waves, tail_rounds
from gpukb.gemm.triton.tuning import GemmTuning, ShapeClass, Trial, TunedClass

LARGE = Config("tma", 128, 256, 64, num_stages=4, epilogue_subtile=True)
MEDIUM = Config("tma", 128, 128, 64, num_stages=4)


@pytest.fixture(autouse=True)
def _committed_table() -> Iterator[None]:
    """Every test starts and ends with the committed tables (some set their own)."""
    tuning._ACTIVE.clear()
    yield
    tuning._ACTIVE.clear()


def _entry(dtype: str, layout: str, shape: tuple[int, int, int], trials: list[tuple[Config, float]],
           aligned: bool = True, config: Config | None = None) -> TunedClass:  # fmt: skip
    cls = ShapeClass.of(dtype, layout, *shape)
    best = config or min(trials, key=lambda t: t[1])[0]
    return TunedClass(
        dtype=dtype, layout=layout, m_bucket=cls.m, n_bucket=cls.n, k_bucket=cls.k, aligned=aligned,
        tiny=cls.tiny, shape=shape, config=best, trials=[Trial(config=c, split_k=None, ms=ms) for c, ms in trials],
        cublas_ms=None,
    )  # fmt: skip


def _table(*entries: TunedClass) -> GemmTuning:
    return GemmTuning.model_construct(edges={}, timing="", classes=list(entries))


def _ladder_table(rates: tuple[float, float, float] = (0.92, 0.9, 0.86)) -> GemmTuning:
    """One class on 4096³ (512 large tiles, the GPU full) where each wave-ladder tiling runs at ``rates`` of the
    large tiling's rate per busy slot."""
    trials = [(LARGE, 1.0)]
    for config, rate in zip(tuning.WAVE_LADDER, rates, strict=True):
        slots = tuning.efficiency(4096, 4096, 4096, LARGE, 132) / tuning.efficiency(4096, 4096, 4096, config, 132)
        trials.append((config, slots / rate))
    return _table(_entry("bfloat16", "NN", (4096, 4096, 4096), trials))


# The rule for classes the table lacks, worked by hand: tiles of 128×256 on 132 multiprocessors.
K_HEAVY_16 = Config("splitk", 128, 128, 64, num_stages=4, num_warps=8)


@pytest.mark.parametrize(
    ("dtype", "shape", "expected"),
    [
        # tiny (3·5·7 multiply-adds, K ≤ 256): the blocked kernel, one launch
        ("bfloat16", (3, 5, 7), Config("blocked", 64, 64, 32, num_stages=2, num_warps=4)),
        # M = 64 is still the small-M path: fp8's split-K with a K step of 2 × 128
        ("float8_e4m3fn", (64, 4096, 4096), Config("splitk", 64, 128, 256, num_stages=4, num_warps=4)),
        # ... and for bf16 the small-M rule: 64 tiles of 64 columns, 132 // 128 = 1 slice
        ("bfloat16", (64, 4096, 4096), Config("splitk", 64, 64, 128, num_stages=5, num_warps=4, split_k=1)),
        # 11 × 4 = 44 large tiles (88 < 132) and K = 4 × 1408 exactly: the split-K kernel, K step 64 for bf16
        ("bfloat16", (1408, 1024, 5632), K_HEAVY_16),
        # fp8 on a full GPU: its large tiling (without warp specialization)
        ("float8_e4m3fn", (4096, 4096, 4096),
         Config("tma", 128, 256, 128, num_stages=4, num_warps=8, epilogue_subtile=True)),
        # a type without tilings of its own takes bf16's large one, with no ladder (1024³: 32 tiles)
        ("float32", (1024, 1024, 1024), DEFAULT_CONFIGS["bfloat16"]),
    ],
)  # fmt: skip
def test_the_rule_gives_exactly_its_configuration(dtype: str, shape: tuple[int, int, int], expected: Config) -> None:
    assert tuning.heuristic(dtype, *shape, 132) == expected


@pytest.mark.parametrize(
    "shape",
    [
        (1408, 1536, 6144),  # 11 × 6 = 66 tiles: 2 × 66 = 132, not below 132
        (1025, 1793, 7172),  # 9 × 8 = 72 tiles, rounded up on both sides (8.01 and 7.004 exact)
        (1408, 1024, 5631),  # 44 tiles, but K one short of 4 × 1408
    ],
)
def test_the_rule_splits_k_only_below_half_a_wave_and_at_four_times_the_side(shape: tuple[int, int, int]) -> None:
    assert tuning.heuristic("bfloat16", *shape, 132).kernel == "tma"


def test_the_rule_without_a_table_picks_the_large_tiling_on_a_tie() -> None:
    # 128×256: one tile, one round of 2 (32,768 elements of work); 64×128 at half the rate: 4 tiles, 2 rounds,
    # 2 × 8192 / 0.5 = 32,768 too
    small = Config("tma", 64, 128, 64, num_stages=4, num_warps=4)
    assert pick_by_waves(128, 256, LARGE, small, 2, 0.5) == LARGE
    assert pick_by_waves(128, 256, LARGE, small, 2, 0.51) == small


@pytest.mark.parametrize(
    ("n", "k", "sms", "expected"),
    [
        (14336, 4096, 132, Config("splitk", 64, 128, 128, num_stages=4, num_warps=4, split_k=1)),  # 112 wide tiles
        (8383, 4096, 132, Config("splitk", 64, 128, 128, num_stages=4, num_warps=4, split_k=1)),  # 65.5 → 66: 132
        (5632, 4096, 132, Config("splitk", 64, 64, 128, num_stages=5, num_warps=4, split_k=1)),  # 44 wide: 88
        (65, 65536, 132, Config("splitk", 64, 64, 128, num_stages=5, num_warps=4, split_k=33)),  # 2 tiles: 132 // 4
        (64, 2048, 132, Config("splitk", 64, 64, 128, num_stages=5, num_warps=4, split_k=4)),  # 2048 // 512
        (64, 2**20, 1000, Config("splitk", 64, 64, 128, num_stages=5, num_warps=4, split_k=128)),  # the cap
    ],
)
def test_the_small_m_rule_exactly(n: int, k: int, sms: int, expected: Config) -> None:
    assert tuning.small_m_rule(n, k, sms) == expected


@pytest.mark.parametrize(
    "call",
    [
        lambda: tuning.small_m_rule(2**63, 4096, 132),
        lambda: tuning.efficiency(2**63, 1, 1, LARGE, 132),
        lambda: tuning.efficiency(1, 2**63, 1, LARGE, 132),
        lambda: tuning.by_bytes(_entry("bfloat16", "NN", (1, 2, 3), [(LARGE, 1.0)]), 2**63, 2, 3, 132),
        lambda: tuning.by_bytes(_entry("bfloat16", "NN", (1, 2, 3), [(LARGE, 1.0)]), 1, 2**63, 3, 132),
    ],
)
def test_sizes_past_a_torch_size_are_refused(call) -> None:
    with pytest.raises(ValueError, match=r"must be an int ≥ 1, ≤ 9223372036854775807; got 9223372036854775808"):
        call()


def test_by_bytes_names_n_and_takes_one_column() -> None:
    entry = _entry("bfloat16", "NN", (1, 2, 3), [(LARGE, 1.0)])
    with pytest.raises(ValueError, match=r"^n must be an int ≥ 1"):
        tuning.by_bytes(entry, 1, 0, 3, 132)
    assert tuning.by_bytes(entry, 1, 1, 3, 132) == LARGE


def test_by_bytes_splits_as_the_rule_did_where_the_representative_ran_the_automatic_split() -> None:
    # 128×128×65536 in 64×64 tiles, split chosen by the rule: 4 tiles, 132 // 4 = 33 slices (K allows 128):
    # 132 units. 64×128×65536 has 2 tiles: 66 would fit the units, the representative's 33 is kept.
    split_64 = Config("splitk", 64, 64, 128, num_stages=5, num_warps=4)
    entry = _entry("bfloat16", "NN", (128, 128, 65536), [(split_64, 0.026)])
    assert tuning.by_bytes(entry, 64, 128, 65536, 132) == replace(split_64, split_k=33)


def _weight_bound_by_hand(dtype: str, m: int, n: int, k: int, ridge: float) -> bool:
    """The docstring's definition: 2·M·N·K over the bytes of A, B (the type's size) and C (two bytes) below the
    ridge point, and N·K above M·K + M·N."""
    size = {"bfloat16": 2, "float16": 2, "float8_e4m3fn": 1}[dtype]
    nbytes = size * m * k + size * k * n + 2 * m * n
    return m * n * k > 0 and n * k > m * k + m * n and 2 * m * n * k / nbytes < ridge


@pytest.mark.parametrize(
    ("dtype", "n", "k"), [("bfloat16", 16384, 16384), ("float8_e4m3fn", 16384, 16384), ("float16", 4096, 14336)]
)
def test_weight_bound_turns_at_the_ridge(dtype: str, n: int, k: int) -> None:
    from gpukb.performance.ceilings import h100_ceilings, measured_ridge

    ridge = measured_ridge(h100_ceilings(), {"bfloat16": "bf16", "float16": "fp16", "float8_e4m3fn": "fp8"}[dtype])
    turn = max(m for m in range(1, 2000) if _weight_bound_by_hand(dtype, m, n, k, ridge))
    assert 200 < turn < 1000  # about the ridge point: the intensity of a decode step is about M
    for m in range(turn - 3, turn + 4):
        assert tuning.weight_bound(dtype, m, n, k) == _weight_bound_by_hand(dtype, m, n, k, ridge) == (m <= turn)


def test_weight_bound_at_its_edges() -> None:
    assert not tuning.weight_bound("bfloat16", 64, 128, 128)  # N·K = M·K + M·N: B is not most of the bytes
    assert not tuning.weight_bound("bfloat16", 1, 2, 2)  # the same
    assert not tuning.weight_bound("bfloat16", 1024, 16384, 16384)  # mostly weight, but compute-bound
    assert not tuning.weight_bound("bfloat16", 4, 4096, 0)  # nothing multiplied
    assert not tuning.weight_bound("bfloat16", 4, 0, 4096)
    with pytest.raises(ValueError, match=r"^unknown dtype 'float32'"):
        tuning.weight_bound("float32", 1, 2, 3)


def test_copies_of_operands_with_two_rows_or_one_byte_elements() -> None:
    assert tuning.contiguous_copied("bfloat16", "NN", 2, 16, 7)  # A: 2 rows of 14 bytes
    assert tuning.contiguous_copied("float8_e4m3fn", "NT", 32, 32, 8)  # A: rows of 8 one-byte elements
    assert not tuning.contiguous_copied("float8_e4m3fn", "NT", 32, 32, 16)


# The split tail's rounds (configs.tail_rounds) and its efficiency.
TAIL = replace(LARGE, split_tail=True)


def test_tail_rounds_worked_by_hand() -> None:
    # 500×11000 in 128×256 tiles: 4 × 43 = 172 tiles. Three rows of tiles (129) in one round, the last row's 43
    # tiles in 132 // 43 = 3 slices: a third of a round, and the tail's cost.
    assert tail_rounds(500, 11000, 4096, TAIL, 132) == pytest.approx(1 + 1 / 3 + 0.1)
    # 896×11000: 7 × 43 = 301 tiles, 3 rounds as they are; six rows (258 tiles) in 2, the last row in 3 slices
    assert tail_rounds(896, 11000, 4096, TAIL, 132) == pytest.approx(2 + 1 / 3 + 0.1)
    # 4096³: 512 tiles in 4 rounds, no tail that helps: 4 rounds, no tail cost
    assert tail_rounds(4096, 4096, 4096, TAIL, 132) == 4.0
    area = 500 * 11000 / (172 * 128 * 256)
    assert tuning.efficiency(500, 11000, 4096, TAIL, 132) == pytest.approx(172 / ((1 + 1 / 3 + 0.1) * 132) * area)


# refill: the ladder of 4096³'s class, rates 0.92, 0.9 and 0.86 of the large tiling's.


def test_refill_at_its_edges() -> None:
    tuning.use_table(_ladder_table())
    full = (4096, 4096, 4096)
    # 3000² takes 288 large tiles (at least one wave): kept, though 128×128 would fill its rounds better
    assert tuning.refill(LARGE, full, 3000, 3000, 3000, 132) == LARGE
    # 129×257 on 4 multiprocessors: 2 × 2 = 4 large tiles, exactly one wave: kept
    assert tuning.refill(LARGE, full, 129, 257, 64, 4) == LARGE
    # on 512 multiprocessors 4096³'s 512 tiles are exactly one wave, so 1200×2048 (80 tiles) is refilled:
    # 64×128 tiles, 304 of them, 0.59 of the slots at 0.9 of the rate
    assert tuning.refill(LARGE, full, 1200, 2048, 2048, 512) == tuning.WAVE_LADDER[1]
    # a tiling never measured on a full GPU counts at the large one's rate, 1.0: 256×128 keeps 0.57 of 132
    # slots busy with 1200×2048; 64×128 0.76 at 0.9
    wide = Config("tma", 256, 128, 64, num_stages=3, num_warps=8)
    assert tuning.refill(wide, full, 1200, 2048, 2048, 132) == tuning.WAVE_LADDER[1]


def test_refill_and_the_cap_name_what_they_were_given() -> None:
    with pytest.raises(TypeError, match=r"config must be a gpukb\.gemm\.triton\.configs\.Config; got str"):
        tuning.refill("tma", (1, 2, 3), 1, 2, 3, 132)
    with pytest.raises(TypeError, match=r"config must be a gpukb\.gemm\.triton\.configs\.Config; got str"):
        tuning.one_launch_cap("splitk", 1, 2, 3, 132)
    with pytest.raises(ValueError, match=r"^shape m must be an int ≥ 0"):
        tuning.refill(LARGE, (-1, 2, 3), 1, 2, 3, 132)
    with pytest.raises(ValueError, match=r"^shape n must be an int ≥ 0"):
        tuning.refill(LARGE, (1, -2, 3), 1, 2, 3, 132)


# The look-up's fallbacks.
TINY_CONFIG = Config("blocked", 32, 32, 32, num_stages=2, num_warps=4)


@pytest.mark.parametrize("layout", ["NT", "TN", "TT"])
def test_a_tiny_product_takes_the_tiny_class_of_any_layout(layout: str) -> None:
    tuning.use_table(_table(_entry("bfloat16", layout, (3, 5, 7), [(TINY_CONFIG, 0.01)])))
    assert tuning.lookup("bfloat16", "NN", 3, 5, 7, 132) == TINY_CONFIG
    assert tuning.lookup("float16", "NN", 3, 5, 7, 132) == TINY_CONFIG  # the type sharing bf16's tiles


def test_a_tiny_product_without_a_tiny_class_takes_the_rule() -> None:
    tuning.use_table(_table(_entry("bfloat16", "NN", (4096, 4096, 4096), [(LARGE, 1.0)])))
    assert tuning.lookup("bfloat16", "NN", 3, 5, 7, 132) is None
    assert tuning.choose("bfloat16", "NN", 3, 5, 7, 132) == Config("blocked", 64, 64, 32, num_stages=2, num_warps=4)


def test_a_class_whose_every_candidate_split_its_tail_gives_its_tiling_without_the_tail() -> None:
    tuning.use_table(_table(_entry("bfloat16", "NN", (4096, 4096, 4096), [(TAIL, 1.0)])))
    assert tuning.lookup("bfloat16", "NN", 4096, 4096, 4096, 132) == LARGE


def _sector_table() -> GemmTuning:
    """An aligned class (2048³), one off 128-byte lines but on 32-byte sectors (2000³: 4000-byte rows) and one off
    both (3000³: 6000-byte rows), in one bucket of each size."""
    blocked = Config("blocked", 128, 256, 64, num_stages=3)
    return _table(
        _entry("bfloat16", "NN", (2048, 2048, 2048), [(LARGE, 1.0)]),
        _entry("bfloat16", "NN", (3000, 3000, 3000), [(LARGE, 1.0), (blocked, 0.8)], aligned=False),
        _entry("bfloat16", "NN", (2000, 2000, 2000), [(LARGE, 1.0), (blocked, 1.2)], aligned=False),
    )


def test_rows_off_lines_are_on_sectors_unless_told() -> None:
    tuning.use_table(_sector_table())
    blocked = Config("blocked", 128, 256, 64, num_stages=3)
    assert tuning.lookup("bfloat16", "NN", 2000, 2000, 2000, 132, aligned=False) == LARGE
    assert tuning.choose("bfloat16", "NN", 2000, 2000, 2000, 132, aligned=False) == LARGE
    assert tuning.choose("bfloat16", "NN", 2000, 2000, 2000, 132, False, True) == LARGE
    assert tuning.choose("bfloat16", "NN", 2000, 2000, 2000, 132, False, False) == blocked
    assert tuning.choose("bfloat16", "NN", 2000, 2000, 2000, 132, True, False) == LARGE  # aligned: its own class


def test_a_neighbour_must_match_whether_the_operands_are_copied() -> None:
    # 4096×4096×8192 is one K bucket above 4096³'s class, whose operands were read in place
    tuning.use_table(_table(_entry("bfloat16", "NN", (4096, 4096, 4096), [(MEDIUM, 1.0)])))
    assert tuning.choose("bfloat16", "NN", 4096, 4096, 8192, 132) == MEDIUM
    assert tuning.choose("bfloat16", "NN", 4096, 4096, 8192, 132, copied=False) == MEDIUM
    assert tuning.choose("bfloat16", "NN", 4096, 4096, 8192, 132, copied=True) == DEFAULT_CONFIGS["bfloat16"]


def test_a_neighbour_of_the_sharing_type_and_the_same_type_first() -> None:
    tuning.use_table(_table(_entry("bfloat16", "NN", (4096, 4096, 4096), [(MEDIUM, 1.0)])))
    assert tuning.lookup("float16", "NN", 4096, 4096, 8192, 132) == MEDIUM  # fp16 borrows bf16's neighbour
    tuning.use_table(_table(
        _entry("bfloat16", "NN", (4096, 4096, 4096), [(MEDIUM, 1.0)]),
        _entry("float16", "NN", (4096, 4096, 4096), [(LARGE, 1.0)]),
    ))  # fmt: skip
    assert tuning.lookup("float16", "NN", 4096, 4096, 8192, 132) == LARGE
    assert tuning.lookup("bfloat16", "NN", 4096, 4096, 8192, 132) == MEDIUM


def test_a_neighbour_on_the_same_sectors_first() -> None:
    # K bucket 4097–16384: 2000×2000×5000 (A's rows 10,000 bytes: off sectors) and 2000×2000×6000 (12,000: on
    # them); 2000³ (on sectors, K one bucket down) takes the latter
    tuning.use_table(_table(
        _entry("bfloat16", "NN", (2000, 2000, 5000), [(LARGE, 1.0)], aligned=False),
        _entry("bfloat16", "NN", (2000, 2000, 6000), [(MEDIUM, 1.0)], aligned=False),
    ))  # fmt: skip
    assert not tuning.contiguous_sectors("bfloat16", "NN", 2000, 2000, 5000)
    assert tuning.contiguous_sectors("bfloat16", "NN", 2000, 2000, 6000)
    assert tuning.lookup("bfloat16", "NN", 2000, 2000, 2000, 132, aligned=False, sectors=True) == MEDIUM
    assert tuning.lookup("bfloat16", "NN", 2000, 2000, 2000, 132, aligned=False, sectors=False) == LARGE


def test_the_bytes_rules_cap_a_one_launch_split_chosen_by_the_rule() -> None:
    fused = Config("splitk", 64, 64, 128, num_stages=4, num_warps=4, fused_reduce=True)
    tuning.use_table(_table(_entry("bfloat16", "NN", (1024, 1024, 1024), [(fused, 0.1)])))
    tuning.use_bytes_rules(True)
    tuning.use_rule("mid_tiles", False)  # the look-up's cap alone (step 20's rule after it: its own tests)
    assert tuning.choose("bfloat16", "NN", 1024, 1024, 1024, 132) == fused  # 256 tiles: one slice, kept
    # 600×256×2048 (a K bucket up, borrowed): 40 tiles, 132 // 40 = 3 slices, more than the one launch adds
    assert tuning.choose("bfloat16", "NN", 600, 256, 2048, 132) == replace(fused, fused_reduce=False)
    with pytest.raises(TypeError, match=r"^on must be True or False"):
        tuning.use_bytes_rules(None)


# The candidates and trials of the tuning runs.


def test_candidates_of_the_runs() -> None:
    c16, waves = tuning.CANDIDATES_16, tuning.CANDIDATES_16_WAVES
    assert tuning.candidates("bfloat16", 128, extended=True) == c16 + waves  # rows aligned unless told
    assert tuning.candidates("bfloat16", 128, extended=True, aligned=False) == c16 + waves + (
        tuning.CANDIDATES_16_UNALIGNED
    )
    # M = 64 is a decode class: the fifth run's 64-row tilings and its own, nothing else
    earlier = c16 + waves + tuning.CANDIDATES_16_DECODE
    assert tuning.candidates("bfloat16", 64, fill=True) == tuple(c for c in earlier if c.block_m == 64) + (
        tuning.CANDIDATES_16_FILL_DECODE
    )
    assert set(tuning.CANDIDATES_16_DECODE) <= set(tuning.candidates("bfloat16", 64, losers=True))


def test_trials_add_no_split_past_k() -> None:
    # K = 128: one K step of the fifth run's 128-deep tilings, so no second slice for any of them
    pool = tuning.candidates("bfloat16", 16, 128, fill=True)
    assert tuning.trials("bfloat16", 16, 1024, 128, 132, fill=True) == tuple(dict.fromkeys(pool))
    tried = tuning.trials("bfloat16", 1024, 1024, 1024, 132, extended=True)
    assert not any(c.pad_rows or c.kernel == "blocked" for c in tried)  # rows aligned unless told


# The active table.


def test_merging_a_table_keeps_the_committed_classes() -> None:
    committed = tuning.active_table()
    assert committed
    entry = _entry("bfloat16", "NN", (4096, 4096, 4096), [(MEDIUM, 1.0)])
    tuning.use_table(_table(entry), merge=True)
    merged = tuning.active_table()
    assert set(merged) == set(committed)  # 4096³'s class replaced, none lost
    assert merged[entry.shape_class].config == MEDIUM


def test_a_table_record_the_package_lacks_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    first = tuning.TABLE_RECORDS[-1]  # read first: the others replace its classes
    present = set(tuning.record_ids()) - {first}
    monkeypatch.setattr(tuning, "record_ids", lambda: present)
    table = tuning.active_table()
    assert table
    assert {c.tiny for c in table} == {False, True}  # the issue-29 run's tiny classes, read after the first


def test_a_table_made_with_other_edges_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    edges = {"m": list(tuning.M_EDGES), "n": list(tuning.N_EDGES)}  # no K edges
    monkeypatch.setattr(tuning, "committed", lambda record_id: GemmTuning.model_construct(edges=edges, classes=[]))
    with pytest.raises(ValueError, match=r"was made with bucket edges .*; the code's differ"):
        tuning.active_table()

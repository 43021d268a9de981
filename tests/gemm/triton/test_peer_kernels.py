"""Reading cuBLAS's nvjet kernel names and counting how tiles fill rounds (gpukb.gemm.triton.peer_kernels), against
names the profiler gave on the H100 and counts worked by hand."""

from __future__ import annotations

import json
import math

import pytest

from gpukb.gemm.triton import peer_kernels as pk
from gpukb.gemm.triton.configs import tile_rounds
from gpukb.gemm.triton.results import sweep_committed
from tests.helpers import ROOT, exactly


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        # (tile_n, tile_m, block_k, stages, cluster, split_k), as the name gives them
        ("nvjet_sm90_tst_192x192_64x3_2x1_v_bz_coopB_NTN", (192, 192, 64, 3, (2, 1), False)),
        ("nvjet_sm90_tst_256x152_64x4_1x2_h_bz_coopA_TNT", (256, 152, 64, 4, (1, 2), False)),
        ("nvjet_sm90_tst_64x24_64x16_2x4_h_bz_splitK_TNT", (64, 24, 64, 16, (2, 4), True)),
        ("nvjet_sm90_tst_128x8_64x12_4x1_v_bz_splitK_NNT", (128, 8, 64, 12, (4, 1), True)),
    ],
)
def test_an_nvjet_name_reads_as_tile_step_stages_cluster(name: str, fields: tuple) -> None:
    kernel = pk.parse_nvjet(name)
    assert (kernel.tile_n, kernel.tile_m, kernel.block_k, kernel.stages, kernel.cluster, kernel.split_k) == fields
    assert kernel.tile == f"{fields[1]}x{fields[0]}"  # rows of C first, as the project writes its own tiles


@pytest.mark.parametrize(
    "name",
    [
        "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16>(cublasLt::cublasSplitKParams<float>)",
        "Memset (Device)",
        "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_64x64_64x4_tn_align8>(Params)",
        "tma_kernel",
        "",
        "nvjet_sm90_tst_192x192_64x3",  # cut short: no cluster
    ],
)
def test_other_kernels_are_not_nvjet(name: str) -> None:
    assert pk.parse_nvjet(name) is None


def test_a_name_that_is_not_a_str_or_has_an_empty_field_is_refused() -> None:
    for bad in (None, 3, b"nvjet_sm90_tst_192x192_64x3_2x1_v", ["nvjet"]):
        with pytest.raises(TypeError, match=f"name must be a str; got {type(bad).__name__}"):
            pk.parse_nvjet(bad)
    empty = ("nvjet_sm90_tst_0x192_64x3_2x1_v_bz", "nvjet_sm90_tst_192x192_64x0_2x1_v", "nvjet_sm90_tst_8x8_64x3_0x1_v")
    for bad in empty:
        with pytest.raises(ValueError, match="all at least 1; got 'nvjet"):
            pk.parse_nvjet(bad)


def test_powers_of_two_means_both_sides() -> None:
    sides = {(128, 256): True, (8, 64): True, (192, 192): False, (256, 152): False, (128, 80): False, (1, 1): True}
    for (tile_n, tile_m), expected in sides.items():
        assert pk.NvjetKernel(tile_n, tile_m, 64, 4, (1, 1), False).powers_of_two is expected


def test_the_peer_gemm_is_the_first_nvjet_kernel_of_a_call() -> None:
    names = ["Memset (Device)", "nvjet_sm90_tst_64x24_64x16_2x4_h_bz_splitK_TNT", "nvjet_sm90_tst_8x8_64x3_1x1_v_bz"]
    assert pk.peer_gemm(names).tile == "24x64"
    assert pk.peer_gemm(["Memset (Device)"]) is None
    assert pk.peer_gemm([]) is None
    assert pk.peer_gemm(None) is None
    with pytest.raises(TypeError, match="kernels must be a list of kernel names or None; got str"):
        pk.peer_gemm("nvjet_sm90_tst_192x192_64x3_2x1_v_bz")


@pytest.mark.parametrize(
    ("shape", "tile", "slices", "expected"),
    [
        # 896×4864 in 64×128 tiles: 14 × 38 = 532 tiles, four full rounds and a fifth of four tiles
        ((896, 4864), (64, 128), 1, (532, 5, 532 / 660, 896 * 4864 / (5 * 132 * 64 * 128))),
        # in 192×192: 5 × 26 = 130 tiles, one round; the last row and column of tiles hang over the edge
        ((896, 4864), (192, 192), 1, (130, 1, 130 / 132, 896 * 4864 / (132 * 192 * 192))),
        # 86×4096 in 64×256, 33 K slices: 2 × 16 × 33 = 1056 units, exactly 8 rounds
        ((86, 4096), (64, 256), 33, (1056, 8, 1.0, 86 * 4096 * 33 / (8 * 132 * 64 * 256))),
        # one tile that fits exactly: one slot of one round used, all of it the product's
        ((128, 256), (128, 256), 1, (1, 1, 1 / 132, 1 / 132)),
    ],
)
def test_fill_counts_tiles_rounds_and_the_useful_share(shape, tile, slices, expected) -> None:
    f = pk.fill(*shape, *tile, 132, slices)
    assert (f.tiles, f.rounds) == expected[:2]
    assert f.fill == pytest.approx(expected[2], rel=1e-12)
    assert f.useful == pytest.approx(expected[3], rel=1e-12)
    assert f.useful <= f.fill <= 1


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((0, 64, 64, 64, 132), ValueError, "m must be"),
        ((64, -1, 64, 64, 132), ValueError, "n must be"),
        ((64, 64, 0, 64, 132), ValueError, "tile_m must be"),
        ((64, 64, 64, 64, 0), ValueError, "sms must be"),
        ((64, 64, 64, 64, 132, 0), ValueError, "slices must be"),
        ((True, 64, 64, 64, 132), TypeError, "m must be"),
        ((64.0, 64, 64, 64, 132), TypeError, "m must be"),
        ((math.nan, 64, 64, 64, 132), TypeError, "m must be"),
        ((64, 64, 64, "64", 132), TypeError, "tile_n must be"),
    ],
)
def test_fill_refuses_what_it_does_not_model(args: tuple, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        pk.fill(*args)


def test_tile_rounds_takes_any_tile_and_refuses_bad_sizes() -> None:
    assert tile_rounds(1170, 4096, 152, 256, 132) == (8 * 16, 1)
    assert tile_rounds(1170, 4096, 256, 152, 132) == (5 * 27, 2)
    assert tile_rounds(0, 4096, 128, 128, 132) == (0, 0)  # an empty output: no tiles, no rounds
    for args, match in (
        ((4, 4, 0, 4, 1), "tile_m"),
        ((4, 4, 4, 4, 0), "sms"),
        ((-1, 4, 4, 4, 1), "^m must"),
        ((4, -1, 4, 4, 1), "^n must"),
        ((2**63, 4, 4, 4, 1), "^m must"),  # past a torch size (an int64)
        ((4, 2**63, 4, 4, 1), "^n must"),
    ):
        with pytest.raises(ValueError, match=match):
            tile_rounds(*args)


def test_peer_tile_rows_read_the_committed_run() -> None:
    raw = json.loads((ROOT / "src/gpukb/data/results/gemm/triton-gemm-sweep-h100-peer-tiles.json").read_text())
    with_nvjet = [
        r for r in raw["rows"]
        if r["dtype"] == "bfloat16" and r["ratio"] and any(k.startswith("nvjet_") for k in r["peer_kernels"] or [])
    ]  # fmt: skip
    rows = pk.peer_tile_rows()
    assert len(rows) == len(with_nvjet) == 63
    assert [r.row.ratio for r in rows] == sorted(r["ratio"] for r in with_nvjet)
    worst = rows[0]
    assert (worst.row.m, worst.row.n, worst.row.k, worst.peer.tile) == (896, 4864, 7503, "192x192")
    assert (worst.peer_fill.tiles, worst.peer_fill.rounds, worst.own_fill.tiles) == (130, 1, 532)
    split = [r for r in rows if r.peer.split_k]
    assert split
    assert all(r.peer_fill is None for r in split)  # the name does not count cuBLAS's slices
    mine = next(r for r in rows if (r.row.split_k or 1) > 1)
    base = -(-mine.row.m // mine.row.config.block_m) * -(-mine.row.n // mine.row.config.block_n)
    assert mine.own_fill.tiles == base * mine.row.split_k


def test_peer_tile_rows_need_the_gpu_the_run_named() -> None:
    record = sweep_committed(pk.PEER_TILES_ID)
    nameless = record.model_copy(update={"run": record.run.model_copy(update={"gpu": None})})
    with pytest.raises(ValueError, match=r"^the record's run names no GPU, so its multiprocessor count is not known$"):
        pk.peer_tile_rows(nameless)


def test_tile_groups_split_by_powers_of_two_and_split_k() -> None:
    rows = pk.peer_tile_rows()
    groups = pk.tile_groups(rows)
    kinds = [(g.powers_of_two, g.split_k) for g in groups]
    assert kinds == [(True, False), (True, True), (False, False), (False, True)]
    assert sum(len(g.rows) for g in groups) == len(rows)
    for g in groups:
        assert all(r.peer.powers_of_two == g.powers_of_two and r.peer.split_k == g.split_k for r in g.rows)
        logs = [math.log(r.row.ratio) for r in g.rows]
        assert g.geomean == pytest.approx(math.exp(sum(logs) / len(logs)), rel=1e-12)
    assert pk.tile_groups([])[0].geomean is None
    assert pk.tile_groups() == groups  # by default, the committed run's rows


def test_a_measured_row_without_a_configuration_is_refused() -> None:
    record = sweep_committed(pk.PEER_TILES_ID)
    row = pk.peer_tile_rows(record)[0].row
    broken = record.model_copy(update={"rows": [row.model_copy(update={"config": None})]})
    with pytest.raises(ValueError, match=f"the row '{row.label}' .* has a ratio but no configuration"):
        pk.peer_tile_rows(broken)


def test_rows_of_other_types_are_left_out() -> None:
    """Only bf16 rows count (the run names kernels for bf16 products only; an fp16 row that had names is not read)."""
    record = sweep_committed(pk.PEER_TILES_ID)
    bf16 = pk.peer_tile_rows(record)[0].row
    fp16 = bf16.model_copy(update={"dtype": "float16"})
    unmeasured = bf16.model_copy(update={"ratio": None})
    only = record.model_copy(update={"rows": [fp16, unmeasured, bf16]})
    assert [r.row for r in pk.peer_tile_rows(only)] == [bf16]


@pytest.mark.parametrize("bad", [None, 3, 1.5, True])
def test_peer_tile_rows_refuse_what_is_not_a_record(bad) -> None:
    with pytest.raises(
        TypeError, match=exactly(f"record must be a TritonGemmSweep or a record id; got {type(bad).__name__}")
    ):
        pk.peer_tile_rows(bad)


@pytest.mark.parametrize("bad", [3, "rows", [1, 2], (), [None]])
def test_tile_groups_refuse_what_is_not_rows(bad) -> None:
    with pytest.raises(
        TypeError, match=exactly(f"rows must be a list of PeerTileRow (see peer_tile_rows); got {type(bad).__name__}")
    ):
        pk.tile_groups(bad)


def test_a_name_with_a_field_no_kernel_has_is_not_read() -> None:
    """Seven digits or more in a field (Python refuses ints of over 4,300 digits with its own message)."""
    assert pk.parse_nvjet("nvjet_sm90_tst_" + "9" * 5000 + "x8_64x3_1x1_v_bz") is None
    assert pk.parse_nvjet("nvjet_sm90_tst_1234567x8_64x3_1x1_v_bz") is None
    assert pk.parse_nvjet("nvjet_sm90_tst_123456x8_64x3_1x1_v_bz").tile_n == 123456

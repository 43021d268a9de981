"""The round counts of :mod:`gpukb.gemm.triton.configs` beyond ``test_tuning.py``'s: each dimension refused by its
own name (K too, where a count reads it), an output with no columns, and the cap on K slices in a split tail."""

from __future__ import annotations

import re

import pytest

from gpukb.gemm.triton.configs import MAX_SPLIT_K, Config, split_for, stream_k_tiles, tail_rows, waves

TAIL = Config("tma", 128, 256, 64, num_stages=4, num_warps=8, split_tail=True)
SPLITK = Config("splitk", 64, 128, 128)
STREAMK = Config("tma", 128, 256, 64, stream_k=True)


@pytest.mark.parametrize("count", [tail_rows, split_for])
@pytest.mark.parametrize(
    ("k", "error", "match"),
    [
        (-1, ValueError, r"^k must be an int ≥ 0.*; got -1$"),
        (True, TypeError, r"^k must be an int.*; got True \(bool\)$"),
    ],
)
def test_counts_that_read_k_refuse_a_bad_k_by_name(count, k, error, match) -> None:
    config = TAIL if count is tail_rows else SPLITK
    with pytest.raises(error, match=match):
        count(512, 11008, k, config, 132)


@pytest.mark.parametrize(("count", "config"), [(waves, TAIL), (stream_k_tiles, STREAMK)])
@pytest.mark.parametrize("bad", ["m", "n"])
def test_counts_without_k_refuse_a_bad_dimension_by_name(count, config, bad) -> None:
    m, n = (-3, 4096) if bad == "m" else (4096, -3)
    with pytest.raises(ValueError, match=rf"^{bad} must be an int ≥ 0.*; got -3$"):
        count(m, n, config, 132)


def test_an_output_without_columns_has_no_tail() -> None:
    # n = 0: no tiles at all, so nothing to split; the persistent kernel takes every (empty) row
    assert tail_rows(300, 0, 4096, TAIL, 132) == (300, 1)


def test_a_tail_of_one_tile_is_cut_into_at_most_max_split_k_slices() -> None:
    # one 128×256 tile on 132 multiprocessors, K = 65536: 1024 steps of 64, room for 256 slices of four steps and
    # 132 would fill the round, but the split-K kernel cuts K into at most 128 slices
    assert MAX_SPLIT_K == 128
    assert tail_rows(128, 256, 65536, TAIL, 132) == (0, 128)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((float("nan"), 2, 4), TypeError, "limit must be an int ≥ 1; got nan"),
        ((-1, 2, 4), ValueError, "limit must be an int ≥ 1; got -1"),
        ((0, 2, 4), ValueError, "limit must be an int ≥ 1; got 0"),
        ((True, 2, 4), TypeError, "limit must be an int ≥ 1; got True"),
        (("232448", 2, 4), TypeError, "limit must be an int ≥ 1; got '232448'"),
        ((232448, 0, 4), ValueError, "element_bytes must be an int ≥ 1; got 0"),
        ((232448, 2, True), TypeError, "out_bytes must be an int ≥ 1; got True"),
    ],
)
def test_fit_shared_memory_refuses_what_it_does_not_model(args: tuple, error: type, message: str) -> None:
    from gpukb.gemm.triton.configs import DEFAULT_CONFIGS, fit_shared_memory

    with pytest.raises(error, match=f"^{re.escape(message)}"):
        fit_shared_memory(DEFAULT_CONFIGS["bfloat16"], *args)
    with pytest.raises(TypeError, match=r"^config must be a gpukb"):
        fit_shared_memory("128x256", 232448, 2, 4)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("128x256",), TypeError, "config must be a gpukb.gemm.triton.configs.Config; got str"),
        ((None,), TypeError, "config must be a gpukb.gemm.triton.configs.Config; got NoneType"),
        ((SPLITK, 0), ValueError, "element_bytes must be an int ≥ 1; got 0"),
        ((SPLITK, -2), ValueError, "element_bytes must be an int ≥ 1; got -2"),
        ((SPLITK, 2.5), TypeError, "element_bytes must be an int ≥ 1; got 2.5"),
        ((SPLITK, True), TypeError, "element_bytes must be an int ≥ 1; got True"),
        ((SPLITK, "2"), TypeError, "element_bytes must be an int ≥ 1; got '2'"),
        ((TAIL, 2, float("nan")), TypeError, "out_bytes must be an int ≥ 1; got nan"),
        ((TAIL, 2, -4), ValueError, "out_bytes must be an int ≥ 1; got -4"),
    ],
)
def test_shared_memory_model_refuses_what_it_does_not_model(args: tuple, error: type, message: str) -> None:
    # it counted -409,600 bytes for -2-byte elements, 512,000.0 for 2.5, nan for nan, and repeated a "2" as a string;
    # a string for the configuration failed on an attribute
    from gpukb.gemm.triton.configs import shared_memory_model

    with pytest.raises(error, match=f"^{re.escape(message)}"):
        shared_memory_model(*args)


def test_fit_shared_memory_keeps_what_fits_and_what_nothing_fits() -> None:
    from gpukb.gemm.triton.configs import DEFAULT_CONFIGS, fit_shared_memory

    default = DEFAULT_CONFIGS["bfloat16"]
    assert fit_shared_memory(default, 10**30, 2, 4) == default  # a huge limit: nothing to cut
    assert fit_shared_memory(default, 1, 2, 4) == default  # not even one stage fits: left for the launch to refuse
    assert fit_shared_memory(default, 232448, 2, 10**18) == default  # an output tile past any limit: the same

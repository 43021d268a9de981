"""Readers of the Triton GEMM's tuning tables beside the look-up: the committed table's kind, which operands of a
contiguous product start their rows on 32-byte sectors, and the wave rates' samples (which classes and tilings
count, at the fill boundary, computed once per table). Values worked by hand; torch-free and cheap."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gpukb.gemm.triton import tuning
from gpukb.gemm.triton.configs import DEFAULT_CONFIGS, Config
from gpukb.gemm.triton.tuning import GemmTuning, ShapeClass, Trial, TunedClass

BASE = DEFAULT_CONFIGS["bfloat16"]  # 128×256 tiles
WIDE, TALL, SHORT = tuning.WAVE_LADDER  # 128×128, 64×128, 128×64


@pytest.fixture
def table() -> Iterator[None]:
    """Restore the committed table (and its wave rates) after a test that sets another."""
    yield
    tuning._ACTIVE.clear()


def test_committed_refuses_a_record_of_another_kind() -> None:
    # gemm/triton-gemm-h100 is the kernel's record (TritonGemm), not a tuning table
    with pytest.raises(ValueError, match=r"holds a 'gemm\.triton-gemm' record; expected 'gemm\.triton-tuning'"):
        tuning.committed("gemm/triton-gemm-h100")


@pytest.mark.parametrize(
    ("dtype", "layout", "m", "n", "k", "on"),
    [
        # A's and B's rows (K long, NT) 4000 bytes = 125 sectors; C's rows 3000 × 2 = 6000 bytes = 187.5 sectors
        ("bfloat16", "NT", 2000, 3000, 2000, False),
        ("bfloat16", "NT", 2, 3000, 2000, False),  # C of two rows: off
        ("bfloat16", "NT", 1, 3000, 2000, True),  # C (and A) of one row count as on sectors
        # NN: B's rows are N long, 3000 → 6000 bytes: off, though A (one row) and C (one row) count as on
        ("bfloat16", "NN", 1, 3000, 2000, False),
        # NT: B = Wᵀ, W's rows K long, 3000 → 6000 bytes: off; N = 2000 alone would be on
        ("bfloat16", "NT", 1, 2000, 3000, False),
        ("bfloat16", "NN", 1, 2000, 3000, True),  # A's one row of 6000 bytes counts as on; B's and C's 4000 are
        ("bfloat16", "NN", 2, 2000, 3000, False),  # A's two rows of 6000 bytes are off
        # fp8 K-major A and B (NT) are read in place: rows of 2000 one-byte elements, 62.5 sectors
        ("float8_e4m3fn", "NT", 4096, 4096, 2000, False),
    ],
)
def test_which_contiguous_operands_start_rows_on_sectors(
    dtype: str, layout: str, m: int, n: int, k: int, on: bool
) -> None:
    assert tuning.contiguous_sectors(dtype, layout, m, n, k) is on


def _class(dtype: str, shape: tuple[int, int, int], trials: list[tuple[Config, float]]) -> TunedClass:
    cls = ShapeClass.of(dtype, "NN", *shape)
    return TunedClass(
        dtype=dtype, layout="NN", m_bucket=cls.m, n_bucket=cls.n, k_bucket=cls.k, shape=shape,
        config=min(trials, key=lambda t: t[1])[0], trials=[Trial(config=c, split_k=None, ms=ms) for c, ms in trials],
        cublas_ms=None,
    )  # fmt: skip


def _use(*classes: TunedClass) -> None:
    tuning.use_table(GemmTuning.model_construct(edges={}, timing="", classes=list(classes)))


@pytest.mark.usefixtures("table")
def test_wave_rate_samples_count_persistent_16_bit_tilings_on_a_full_gpu() -> None:
    # 4224×1024: 33 × 4 = 132 tiles of 128×256, 264 of 128×128, 528 of 64×128 and of 128×64: every tiling fills
    # whole rounds of 132, so each sample is the default's time over the tiling's
    blocked = Config("blocked", 128, 256, 64, num_stages=3)  # full too, but not the persistent kernel
    trials = [(BASE, 1.0), (WIDE, 1.25), (TALL, 2.0), (SHORT, 4.0), (blocked, 0.5)]
    fp8 = _class("float8_e4m3fn", (4224, 1024, 1024), [(BASE, 1.0), (WIDE, 0.5)])  # not a 16-bit class
    _use(_class("bfloat16", (4224, 1024, 1024), trials), fp8)
    samples = tuning.wave_rate_samples()
    assert samples == {BASE.label: [1.0], WIDE.label: [0.8], TALL.label: [0.5], SHORT.label: [0.25]}
    assert tuning.wave_rate_samples() is samples  # computed once per table


@pytest.mark.usefixtures("table")
def test_wave_rate_samples_count_a_fill_of_exactly_full_fill() -> None:
    # 4752×4096 (19,464,192 elements of C): 38 × 16 = 608 tiles of 128×256 take 5 rounds of 132, 38 × 32 = 1,216
    # of 128×128 take 10: each keeps 19,464,192 / (5 × 132 × 32,768) = 19,464,192 / (10 × 132 × 16,384) = 0.9 of
    # its slots busy, exactly FULL_FILL ("at least FULL_FILL" counts)
    assert tuning.FULL_FILL == 0.9
    _use(_class("bfloat16", (4752, 4096, 1024), [(BASE, 1.0), (WIDE, 1.25)]))
    samples = tuning.wave_rate_samples()
    assert samples.keys() == {BASE.label, WIDE.label}
    assert samples[WIDE.label] == [pytest.approx(0.8)]  # (1.0 / 0.9) / (1.25 / 0.9)

"""Operation and byte counts, and the source notes' worked example (seed 003) recomputed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpukb.measuring.counting import (
    arithmetic_intensity,
    attention_bytes,
    attention_flops,
    causal_pairs,
    conv2d_counts,
    copy_bytes,
    element_bytes,
    gemm_bytes,
    gemm_flops,
)
from gpukb.performance.roofline import bound

# The notes' example (seed 003, "Bounding the performance"): a 3×3 convolution with bias, 1×3×416×480 in,
# 1×16×208×240 out, FP32, on a machine of 1 TFLOP/s and 1000 GB/s.
SEED_LAYER = dict(input_shape=(1, 3, 416, 480), out_channels=16, kernel=(3, 3), stride=2, padding=1)


def test_gemm_counts() -> None:
    assert gemm_flops(2, 3, 4) == 48
    assert gemm_bytes(2, 3, 4, a_bytes=2) == (2 * 4 + 4 * 3 + 2 * 3) * 2
    assert gemm_bytes(2, 3, 4, a_bytes=1, b_bytes=1, c_bytes=2) == 8 + 12 + 12


@given(st.integers(1, 40), st.integers(1, 40))
def test_causal_pairs_match_a_brute_force_mask(q_len: int, kv_len: int) -> None:
    kept = sum(1 for i in range(q_len) for j in range(kv_len) if j <= i)
    assert causal_pairs(q_len, kv_len) == kept


def test_attention_counts() -> None:
    assert attention_flops(2, 3, 5, 7, 8) == 4 * 2 * 3 * 5 * 7 * 8
    assert attention_flops(1, 1, 4, 4, 2, causal=True) == 4 * (1 + 2 + 3 + 4) * 2
    assert attention_bytes(1, 2, 3, 4, 8, elem_bytes=2) == 2 * 8 * 2 * (2 * 3 + 2 * 4)


def test_copy_and_intensity() -> None:
    assert copy_bytes(10) == 20
    assert arithmetic_intensity(10, 4) == 2.5
    assert element_bytes("bf16") == 2
    assert element_bytes("fp8") == 1
    assert element_bytes("tf32") == 4


def test_seed_conv_example_counts() -> None:
    layer = conv2d_counts(**SEED_LAYER)
    assert layer.output_shape == (1, 16, 208, 240)  # stride 2 and padding 1 reproduce the notes' output
    assert layer.output_elems == 798_720
    assert layer.macs == 798_720 * 27
    # 2 FLOPs per multiply-add plus one addition per output for the bias. The notes count the bias as a
    # multiply-add, (27 + 1) × 2 per output, and get 44,728,320: 1.8% more.
    assert layer.flops == 43_929_600
    assert 798_720 * (27 + 1) * 2 == 44_728_320


def test_lecture_conv_example_parameters() -> None:
    layer = conv2d_counts(**SEED_LAYER)
    assert layer.params == 448
    assert (3 * 3) * 16 + 16 == 160  # the notes' formula leaves out the 3 input channels
    assert (3 * 3) * 3 * 16 + 16 == 448
    assert layer.params * 4 == 1_792  # bytes in FP32, which the notes list next to byte counts


def test_lecture_conv_example_bytes() -> None:
    layer = conv2d_counts(**SEED_LAYER)
    assert layer.input_elems * 4 == 2_396_160
    assert layer.output_elems * 4 == 3_194_880
    assert layer.bytes(4) == 2_396_160 + 3_194_880 + 1_792 == 5_592_832
    assert 2_396_160 + 3_194_880 == 10 * 559_104  # the notes' 559104 bytes drops a digit


def test_lecture_conv_example_bounds_are_microseconds() -> None:
    layer = conv2d_counts(**SEED_LAYER)
    floor = bound(layer.flops, layer.bytes(4), peak_flops=1e12, bandwidth=1000e9)
    assert floor.compute_s == pytest.approx(43.93e-6, rel=1e-3)  # microseconds, not the notes' 44.8 ns
    assert floor.memory_s == pytest.approx(5.59e-6, rel=1e-3)  # microseconds, not 5.6 ns
    assert pytest.approx(44.7e-6, rel=1e-3) == 44_728_320 / 1e12  # even the notes' own count gives µs
    assert floor.limiter == "compute"


@pytest.mark.parametrize(
    ("flops", "nbytes", "intensity"),
    [
        # The notes' table of arithmetic intensities (FP16 data), recomputed from each operation's definition.
        (gemm_flops(512, 4096, 1024), gemm_bytes(512, 4096, 1024, 2), 315),  # linear layer, batch 512
        (gemm_flops(1, 4096, 1024), gemm_bytes(1, 4096, 1024, 2), 1),  # the same layer, batch 1
        (8, 2 + 2, 2.0),  # 3×3 max pooling, unit stride: the max of 9 values is 8 comparisons per output
        (1, 2 + 2, 0.25),  # ReLU: one operation, read 2 bytes, write 2 bytes
    ],
)
def test_seed_table_of_intensities(flops, nbytes, intensity) -> None:
    assert arithmetic_intensity(flops, nbytes) == pytest.approx(intensity, abs=0.1)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: gemm_flops(0, 1, 1), ValueError, "m must be an int ≥ 1; got 0"),
        (lambda: gemm_flops(1.5, 1, 1), TypeError, r"m must be an int ≥ 1; got 1\.5 \(float\)"),
        (lambda: gemm_flops(True, 1, 1), TypeError, "m must be an int ≥ 1; got True"),
        (lambda: element_bytes("fp4"), ValueError, "unknown element type 'fp4'; known:"),
        (lambda: arithmetic_intensity(1, 0), ValueError, "bytes > 0"),
        (lambda: conv2d_counts((1, 3, 2, 2), 4, (3, 3)), ValueError, "does not fit"),
        (lambda: conv2d_counts((1, 3, 8), 4, (3, 3)), ValueError, r"\(N, C, H, W\)"),
        (lambda: conv2d_counts((1, 3, 8, 8), 4, (3, 3), padding=-1), ValueError, "padding must be an int ≥ 0"),
    ],
)
def test_bad_sizes_are_refused(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()

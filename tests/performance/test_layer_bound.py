"""The bound of a layer: the counts of gpukb.measuring.counting and gpukb.attention.costs, bounded by
gpukb.performance.roofline on the datasheet and on the measured H100 ceilings, and what it refuses."""

from __future__ import annotations

import pytest

from gpukb.attention.costs import attention_costs
from gpukb.measuring.counting import conv2d_counts, gemm_bytes, gemm_flops
from gpukb.performance.ceilings import h100_ceilings
from gpukb.performance.layer_bound import layer_bound, layer_work
from gpukb.performance.roofline import bound
from gpukb.performance.specs import load


def test_a_gemm_is_bounded_on_both_sets_of_ceilings() -> None:
    b = layer_bound("gemm", "bf16", {"m": 4096, "n": 4096, "k": 4096}, "h100-sxm5")
    assert (b.flops, b.nbytes) == (gemm_flops(4096, 4096, 4096), gemm_bytes(4096, 4096, 4096, 2))
    assert b.intensity == b.flops / b.nbytes
    peak = load().gpu("h100-sxm5").figure("bf16_tensor").dense
    assert b.datasheet.tflops == peak
    assert b.datasheet.compute_s == bound(b.flops, b.nbytes, peak * 1e12, 3350e9).compute_s
    measured = h100_ceilings()  # the H100's quoted ceilings: medians of interleaved rounds
    assert (b.measured.tflops, b.measured.gbps) == (measured["bf16"], measured["bandwidth"])
    assert b.measured.limiter == "compute"
    assert b.measured.time_s >= b.datasheet.time_s  # measured ceilings are lower than the datasheet's


def test_a_thin_product_is_memory_bound() -> None:
    b = layer_bound("gemm", "bf16", {"m": 16, "n": 4096, "k": 4096}, "h100-sxm5")
    assert b.datasheet.limiter == b.measured.limiter == "memory"
    assert b.datasheet.time_s == b.datasheet.memory_s


def test_the_bounding_page_convolution_and_attention_count_as_the_library_does() -> None:
    sizes = {"n": 1, "c_in": 3, "h": 416, "w": 480, "out_channels": 16, "kh": 3, "kw": 3, "stride": 2, "padding": 1}
    counts = conv2d_counts((1, 3, 416, 480), 16, (3, 3), 2, 1, True)
    assert layer_work("conv2d", "fp32", sizes, True) == (counts.flops, counts.bytes(4))
    att = {"batch": 2, "heads": 32, "kv_heads": 8, "q_len": 1024, "kv_len": 2048, "head_dim": 128}
    costs = attention_costs(2, 32, 1024, 2048, 128, 8, True, "fp16")
    assert layer_work("attention", "fp16", att, True) == (costs.flops, costs.io_bytes)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("gemm", "bf16", {"m": 0, "n": 1, "k": 1}, "h100-sxm5"), ValueError, "m must be an int ≥ 1; got 0"),
        (("gemm", "bf16", {"m": "8", "n": 1, "k": 1}, "h100-sxm5"), TypeError, "m must be an int ≥ 1; got '8'"),
        (("gemm", "bf16", {"m": 8, "n": 1, "k": 1}, "h999"), ValueError, "unknown GPU 'h999'"),
        (("gemm", "bf16", {"m": 8, "n": 1, "k": 1}, "v100-sxm2"), ValueError, "no BF16 tensor core, dense figure"),
        (("gemm", "int8", {"m": 8, "n": 1, "k": 1}, "h100-sxm5"), ValueError, "unknown dtype 'int8'"),
        (("pool", "bf16", {}, "h100-sxm5"), ValueError, "unknown layer 'pool'"),
        (
            (
                "conv2d",
                "fp16",
                {"n": 1, "c_in": 1, "h": 2, "w": 2, "out_channels": 1, "kh": 3, "kw": 3, "stride": 1, "padding": 0},
                "h100-sxm5",
            ),
            ValueError,
            "does not fit",
        ),
        (
            (
                "attention",
                "fp16",
                {"batch": 1, "heads": 32, "kv_heads": 5, "q_len": 1, "kv_len": 1, "head_dim": 8},
                "h100-sxm5",
            ),
            ValueError,
            "kv_heads (5) must divide heads (32)",
        ),
    ],
)
def test_what_it_refuses(args, error, message) -> None:
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        layer_bound(*args)

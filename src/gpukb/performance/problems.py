"""Worked problems of the performance chapter, every answer computed by the library (see :mod:`gpukb.problems`).

Datasheet figures come from ``gpu_specs.toml`` (:mod:`gpukb.performance.specs`, each with its source), measured
ceilings from the committed H100 sweep (:mod:`gpukb.performance.ceilings`). The bound on a Llama MLP projection is
the GEMM chapter's (:mod:`gpukb.gemm.problems`), where its shape is.
"""

from __future__ import annotations

from gpukb.measuring.counting import element_bytes
from gpukb.performance import ceilings, specs
from gpukb.performance.results import H100_SWEEP
from gpukb.performance.roofline import ridge_point
from gpukb.problems import Problem

#: The Llama 3 paper's table of model shapes (Table 3: 8B has model dimension 4,096 and FFN dimension 14,336).
LLAMA3_PAPER = (
    "Dubey et al., The Llama 3 Herd of Models, Table 3 (arXiv:2407.21783)",
    "https://arxiv.org/abs/2407.21783",
)


def datasheet(gpu_id: str, quantity: str) -> tuple[float, tuple[str, str]]:
    """A dense datasheet figure and its source as ``(label, url)``."""
    table = specs.load()
    figure = table.gpu(gpu_id).figure(quantity)
    if figure is None:
        raise ValueError(f"the spec table has no {quantity} for {gpu_id}")
    source = table.sources[figure.source]
    return figure.dense, (source.title, source.url)


def decode_ceiling() -> Problem:
    params = 8.0e9
    bandwidth, source = datasheet("h100-sxm5", "memory_bandwidth")
    measured = ceilings.h100_ceilings()["bandwidth"]
    nbytes = params * element_bytes("bf16")
    sheet_s, measured_s = nbytes / (bandwidth * 1e9), nbytes / (measured * 1e9)
    return Problem(
        id="decode-ceiling",
        title="Tokens per second when decoding one sequence",
        question="A model of 8.0 billion bf16 parameters generates one token at a time for one user on an H100. "
        "What rate can it not exceed?",
        answer=f"About {1 / sheet_s:,.0f} tokens/s at the datasheet's {bandwidth:,.0f} GB/s, and {1 / measured_s:,.0f} "
        f"at the {measured:,.0f} GB/s the H100 reached copying: each token reads every weight once.",
        working=(
            f"Weights: 8.0e9 × 2 B = {nbytes / 1e9:.1f} GB, all read for every generated token (batch 1, so each "
            "weight is used for 2 FLOP per byte read: far below any ridge point).",
            f"Datasheet: {nbytes / 1e9:.1f} GB / {bandwidth:,.0f} GB/s = {sheet_s * 1e3:.2f} ms per token → "
            f"{1 / sheet_s:,.0f} tokens/s.",
            "Measured copy ceiling of the H100 (a 1 GiB copy, the median of interleaved rounds): "
            f"{measured:,.1f} GB/s → {measured_s * 1e3:.2f} ms → "
            f"{1 / measured_s:,.0f} tokens/s. Batching several sequences reuses each weight read, which is why "
            "servers batch.",
        ),
        sources=(source,),
    )


def ridge_points() -> Problem:
    peak, source = datasheet("h100-sxm5", "bf16_tensor")
    bandwidth, _ = datasheet("h100-sxm5", "memory_bandwidth")
    measured = ceilings.h100_ceilings()
    sheet = ridge_point(peak * 1e12, bandwidth * 1e9)
    ridge = ceilings.measured_ridge(measured, "bf16")
    return Problem(
        id="ridge-points",
        title="The H100's ridge point, datasheet and measured",
        question="Below what arithmetic intensity is a bf16 operation memory-bound on an H100, by the datasheet and "
        "by what the H100 measured?",
        answer=f"{sheet:,.0f} FLOP/B by the datasheet, {ridge:,.0f} FLOP/B by the measured ceilings "
        f"({measured['bf16'] / peak:.0%} of the datasheet's rate and {measured['bandwidth'] / bandwidth:.0%} of its "
        "bandwidth).",
        working=(
            f"Datasheet: {peak:,.1f} TFLOP/s dense bf16 / {bandwidth:,.0f} GB/s = {sheet:,.1f} FLOP/B.",
            f"Measured (the H100's ceilings, medians of interleaved rounds): bf16 product {measured['bf16']:,.1f} "
            f"TFLOP/s, copy {measured['bandwidth']:,.1f} GB/s: {ridge:,.1f} FLOP/B.",
            "An operation below the ridge (elementwise ops, a matrix-vector product, decoding) is limited by memory "
            "whatever its kernel does; above it, by arithmetic.",
        ),
        sources=(source,),
    )


def checkpoint_load() -> Problem:
    nbytes = 16e9
    copies = ceilings.sweep(H100_SWEEP).host_device
    size = max(r.bytes for r in copies)  # the largest copy: the least launch overhead per byte
    rates = {r.memory: r.gbps for r in copies if r.direction == "h2d" and r.bytes == size}
    pinned, pageable = rates["pinned"], rates["pageable"]
    return Problem(
        id="checkpoint-load",
        title="Copying a checkpoint to the GPU",
        question="16 GB of weights sit in host memory. How long does copying them to an H100 take from pinned "
        "memory, and from ordinary (pageable) memory?",
        answer=f"About {nbytes / (pinned * 1e9):.1f} s from pinned memory ({pinned:.1f} GB/s) and "
        f"{nbytes / (pageable * 1e9):.1f} s from pageable memory ({pageable:.1f} GB/s).",
        working=(
            f"The committed H100 sweep copied {size / 2**30:.0f} GiB host → device at {pinned:.2f} GB/s from pinned "
            f"and {pageable:.2f} GB/s from pageable memory (medians).",
            f"16e9 B / {pinned:.2f}e9 B/s = {nbytes / (pinned * 1e9):.2f} s; 16e9 / {pageable:.2f}e9 = "
            f"{nbytes / (pageable * 1e9):.2f} s.",
            "A pageable copy goes through a pinned staging buffer the driver fills first; pinning the source "
            "(`tensor.pin_memory()`) skips that step.",
        ),
    )


def problems() -> list[Problem]:
    """The chapter's worked problems, computed now."""
    return [decode_ceiling(), ridge_points(), checkpoint_load()]

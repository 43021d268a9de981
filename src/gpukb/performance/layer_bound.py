"""The bound of one layer on one GPU: its operations and bytes, and the roofline floor on two sets of ceilings.

A layer (a matrix product, a 2-D convolution or an attention forward pass, grouped-query included) is counted by
the site's counting conventions (:mod:`gpukb.measuring.counting`; for attention the same counts as
:func:`gpukb.attention.costs.attention_costs`), then
bounded (:func:`gpukb.performance.roofline.bound`) on the GPU's datasheet ceilings (:mod:`gpukb.performance.specs`,
dense tensor-core rate for the type and memory bandwidth) and on the ceilings the H100 measured
(:func:`gpukb.performance.ceilings.quoted_ceilings`: for the H100, the copy and fp16/bf16 ceilings measured in
interleaved rounds, and the sweep's best product for the other types).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpukb.arguments import choice, flag, given
from gpukb.measuring.counting import (
    arithmetic_intensity,
    attention_bytes,
    attention_flops,
    conv2d_counts,
    element_bytes,
    gemm_bytes,
    gemm_flops,
)
from gpukb.performance.ceilings import quoted_ceilings
from gpukb.performance.results import H100_SWEEP
from gpukb.performance.roofline import bound, ridge_point
from gpukb.performance.specs import FILE, GEMM_QUANTITY, QUANTITIES, load

#: The layers :func:`layer_work` counts, and the sizes each takes (in the order they are checked).
LAYERS = {
    "gemm": ("m", "n", "k"),
    "conv2d": ("n", "c_in", "h", "w", "out_channels", "kh", "kw", "stride", "padding"),
    "attention": ("batch", "heads", "kv_heads", "q_len", "kv_len", "head_dim"),
}


def layer_work(layer: str, dtype: str, sizes: Mapping[str, object], flag_on: bool = False) -> tuple[int, int]:
    """Operations and fewest bytes of one layer.

    Args:
        layer: One of :data:`LAYERS`.
        dtype: The element type, one of ``gpukb.performance.specs.GEMM_QUANTITY``.
        sizes: The layer's sizes by the names :data:`LAYERS` lists (``kv_heads`` may be ``None``: as many as
            ``heads``).
        flag_on: The convolution's bias, or the attention's causal mask (ignored for ``gemm``).

    Raises:
        ValueError: For an unknown layer or type, a size below its minimum, a kernel that does not fit its input,
            or ``kv_heads`` that do not divide ``heads``.
        TypeError: For a size that is not an int, or ``sizes`` that is not a mapping.
    """
    choice("layer", layer, tuple(LAYERS))
    choice("dtype", dtype, tuple(GEMM_QUANTITY))
    if not isinstance(sizes, Mapping):
        raise TypeError(f"sizes must map the layer's sizes {list(LAYERS[layer])} to ints; got {given(sizes)}")
    flag_on = flag("bias" if layer == "conv2d" else "causal", flag_on)
    s = {name: sizes.get(name) for name in LAYERS[layer]}
    if layer == "gemm":
        return gemm_flops(s["m"], s["n"], s["k"]), gemm_bytes(s["m"], s["n"], s["k"], element_bytes(dtype))
    if layer == "conv2d":
        counts = conv2d_counts((s["n"], s["c_in"], s["h"], s["w"]), s["out_channels"], (s["kh"], s["kw"]),
                               s["stride"], s["padding"], flag_on)  # fmt: skip
        return counts.flops, counts.bytes(element_bytes(dtype))
    flops = attention_flops(s["batch"], s["heads"], s["q_len"], s["kv_len"], s["head_dim"], flag_on)
    size = element_bytes(dtype)
    return flops, attention_bytes(s["batch"], s["heads"], s["q_len"], s["kv_len"], s["head_dim"], size, s["kv_heads"])


@dataclass(frozen=True)
class Ceiling:
    """One layer bounded on one pair of ceilings.

    Attributes:
        tflops: The compute ceiling, TFLOP/s.
        gbps: The memory ceiling, GB/s.
        ridge: The ridge point, FLOP per byte.
        compute_s: Operations over the compute ceiling, seconds.
        memory_s: Bytes over the memory ceiling, seconds.
        time_s: The floor: the larger of the two.
        limiter: ``"compute"`` or ``"memory"``.
    """

    tflops: float
    gbps: float
    ridge: float
    compute_s: float
    memory_s: float
    time_s: float
    limiter: str


def _ceiling(flops: int, nbytes: int, tflops: float, gbps: float) -> Ceiling:
    peak, bandwidth = tflops * 1e12, gbps * 1e9
    b = bound(flops, nbytes, peak, bandwidth)
    return Ceiling(tflops, gbps, ridge_point(peak, bandwidth), b.compute_s, b.memory_s, b.time_s, b.limiter)


@dataclass(frozen=True)
class LayerBound:
    """What :func:`layer_bound` finds.

    Attributes:
        flops: Operations of the layer.
        nbytes: Fewest bytes it moves.
        intensity: FLOP per byte.
        datasheet: The bound on the GPU's datasheet ceilings.
        measured: The bound on the ceilings the H100 measured for the type, or ``None`` where it measured none.
    """

    flops: int
    nbytes: int
    intensity: float
    datasheet: Ceiling
    measured: Ceiling | None


# --8<-- [start:layer-bound]
def layer_bound(
    layer: str, dtype: str, sizes: Mapping[str, object], gpu: str, flag_on: bool = False, sweep: str = H100_SWEEP
) -> LayerBound:
    """Bound one layer (:func:`layer_work`) on a GPU of the datasheet table and on the measured H100 ceilings.

    Args:
        layer: As for :func:`layer_work`.
        dtype: As for :func:`layer_work`.
        sizes: As for :func:`layer_work`.
        gpu: A GPU id of ``gpukb/data/gpu_specs.toml`` (e.g. ``"h100-sxm5"``).
        flag_on: As for :func:`layer_work`.
        sweep: The committed sweep whose measured ceilings are used.

    Raises:
        ValueError: As :func:`layer_work`, for an unknown GPU, or a GPU whose datasheet lacks the type's rate or its
            memory bandwidth.
    """
    flops, nbytes = layer_work(layer, dtype, sizes, flag_on)
    table = load()
    if not isinstance(gpu, str):
        raise TypeError(f"gpu must be a GPU id (a string such as 'h100-sxm5'); got {given(gpu)}")
    if gpu not in table.gpus:
        raise ValueError(f"unknown GPU {gpu!r}; GPUs in {FILE}: {sorted(table.gpus)}")
    entry = table.gpus[gpu]
    peak, bandwidth = entry.figure(GEMM_QUANTITY[dtype]), entry.figure("memory_bandwidth")
    for quantity, figure in ((GEMM_QUANTITY[dtype], peak), ("memory_bandwidth", bandwidth)):
        if figure is None:
            raise ValueError(f"{entry.name} has no {QUANTITIES[quantity][1]} figure in {FILE}")
    measured = quoted_ceilings(sweep)
    return LayerBound(
        flops=flops,
        nbytes=nbytes,
        intensity=arithmetic_intensity(flops, nbytes),
        datasheet=_ceiling(flops, nbytes, peak.dense, bandwidth.value),
        measured=_ceiling(flops, nbytes, measured[dtype], measured["bandwidth"]) if dtype in measured else None,
    )
    # --8<-- [end:layer-bound]

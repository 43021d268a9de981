"""What attention costs: why the scores are scaled by 1/√d, the operations and bytes of one forward pass, and
the memory of a key/value cache.

Operation counts come from :mod:`gpukb.measuring.counting` (``attention_flops``: two matrix products, 4 · pairs · d
per head, the softmax not counted); this module adds the parts that depend on grouped-query attention (bytes
of K and V, the cache) and the score matrix that a non-fused implementation writes to memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpukb.arguments import array_size, flag, non_negative_int, positive_int, random_generator
from gpukb.measuring.counting import attention_flops, causal_pairs, element_bytes

__all__ = [
    "AttentionCosts",
    "AttentionSummary",
    "attention_costs",
    "attention_summary",
    "costs_table",
    "dot_product_statistics",
    "kv_cache_bytes",
    "kv_cache_table",
    "scaling_table",
]


# --8<-- [start:variance]
def dot_product_statistics(d: int, samples: int = 20000, keys: int = 64, seed: int = 0) -> dict[str, float]:
    """Dot products of random unit-variance vectors of width ``d``, with and without the 1/√d scale.

    With the components of q and k independent, of mean 0 and variance 1, each product q_i k_i has mean 0 and
    variance E[q_i²] E[k_i²] = 1, so their sum q · k has variance d (Vaswani et al. 2017, footnote 4). Dividing
    by √d brings it back to 1, whatever d is.

    Returns:
        ``variance``: the measured variance of q · k (analytically d); ``scaled_variance``: of q · k / √d
        (analytically 1); ``max_weight`` and ``scaled_max_weight``: the mean over queries of the largest softmax
        weight among ``keys`` keys, without and with the scale (near 1 means the softmax is almost one-hot, and
        its gradient almost zero).
    """
    d = positive_int("d", d)
    samples, keys = positive_int("samples", samples), positive_int("keys", keys)
    array_size(f"the keys drawn for samples={samples}, keys={keys}, d={d}", (samples // keys + 1, keys, d))
    rng = random_generator("seed", non_negative_int("seed", seed))
    q = rng.standard_normal((samples // keys + 1, 1, d))
    k = rng.standard_normal((samples // keys + 1, keys, d))
    dots = (q @ np.swapaxes(k, 1, 2))[:, 0, :]  # (queries, keys)

    def max_weight(scores: np.ndarray) -> float:
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        return float((e.max(axis=1) / e.sum(axis=1)).mean())

    return {
        "variance": float(dots.var()),
        "scaled_variance": float((dots / math.sqrt(d)).var()),
        "max_weight": max_weight(dots),
        "scaled_max_weight": max_weight(dots / math.sqrt(d)),
    }
    # --8<-- [end:variance]


def scaling_table(dims: tuple[int, ...] = (16, 64, 128, 512), keys: int = 64) -> tuple[list[str], list[list[object]]]:
    """The statistics of :func:`dot_product_statistics` for several widths, as ``(headers, rows)``."""
    headers = ["d", "Var(q·k), analytic", "Var(q·k), measured", "Var(q·k/√d), measured",
               f"largest of {keys} weights, unscaled", "largest weight, scaled"]  # fmt: skip
    rows = []
    for d in dims:
        s = dot_product_statistics(d, keys=keys)
        rows.append([d, d, round(s["variance"], 1), round(s["scaled_variance"], 3), round(s["max_weight"], 3),
                     round(s["scaled_max_weight"], 3)])  # fmt: skip
    return headers, rows


@dataclass(frozen=True)
class AttentionCosts:
    """The cost of one attention forward pass.

    Attributes:
        flops: Operations of the two matrix products (``gpukb.measuring.counting.attention_flops``, counted over the
            *query* heads: each query head multiplies with its key/value head, shared or not).
        io_bytes: Fewest bytes a fused kernel moves: Q and O over the query heads, K and V over the key/value
            heads, each once.
        score_bytes: One score matrix, B · H · L_q · L_k elements (full, even when causal: a non-fused kernel
            stores it whole).
        unfused_bytes: ``io_bytes`` plus writing the scores, reading them for the softmax, writing the
            probabilities and reading them for the second product: 4 · ``score_bytes`` more.
    """

    flops: int
    io_bytes: int
    score_bytes: int
    unfused_bytes: int

    @property
    def intensity(self) -> float:
        """FLOP per byte of the fused kernel."""
        return self.flops / self.io_bytes

    @property
    def unfused_intensity(self) -> float:
        """FLOP per byte when the score matrix goes through memory."""
        return self.flops / self.unfused_bytes


# --8<-- [start:costs]
def attention_costs(
    batch: int,
    heads: int,
    q_len: int,
    kv_len: int,
    head_dim: int,
    kv_heads: int | None = None,
    causal: bool = False,
    dtype: str = "bf16",
) -> AttentionCosts:
    """Count one forward pass of (grouped-query) attention; see :class:`AttentionCosts`.

    Raises:
        ValueError: If a size is not positive, ``kv_heads`` does not divide ``heads``, or the type is unknown.
    """
    kv_heads = heads if kv_heads is None else positive_int("kv_heads", kv_heads)
    if positive_int("heads", heads) % kv_heads:
        raise ValueError(f"kv_heads ({kv_heads}) must divide heads ({heads})")
    size = element_bytes(dtype)
    flops = attention_flops(batch, heads, q_len, kv_len, head_dim, flag("causal", causal))
    io = batch * head_dim * size * (2 * heads * q_len + 2 * kv_heads * kv_len)
    scores = batch * heads * q_len * kv_len * size
    return AttentionCosts(flops=flops, io_bytes=io, score_bytes=scores, unfused_bytes=io + 4 * scores)
    # --8<-- [end:costs]


# --8<-- [start:rereads]
def flash_traffic_bytes(
    batch: int,
    heads: int,
    q_len: int,
    kv_len: int,
    head_dim: int,
    block_m: int,
    kv_heads: int | None = None,
    causal: bool = False,
    dtype: str = "bf16",
) -> int:
    """Bytes a FlashAttention-2 forward moves if no cache between the SMs and memory served any of it.

    Each program holds ``block_m`` query rows and streams the keys and values it needs (all ``kv_len``, or under
    a top-left causal mask those up to its last row), so K and V are read once per query block, not once: this
    is the Θ(N²d²/M) of FlashAttention's Theorem 2 (Dao et al. 2022), with the SRAM size M setting ``block_m``.
    Q is read and O written once. Key/value heads are counted once per query head that reads them.

    Raises:
        ValueError: If a size is not positive, ``kv_heads`` does not divide ``heads``, or the type is unknown.
    """
    kv_heads = heads if kv_heads is None else positive_int("kv_heads", kv_heads)
    if positive_int("heads", heads) % kv_heads:
        raise ValueError(f"kv_heads ({kv_heads}) must divide heads ({heads})")
    for name, value in (("batch", batch), ("q_len", q_len), ("kv_len", kv_len), ("head_dim", head_dim),
                        ("block_m", block_m)):  # fmt: skip
        positive_int(name, value)
    causal = flag("causal", causal)
    # keys each query block reads: all of them, or (top-left causal) those up to its last row
    keys_read = sum(min(start + block_m, q_len, kv_len) if causal else kv_len for start in range(0, q_len, block_m))
    return batch * heads * head_dim * element_bytes(dtype) * (2 * q_len + 2 * keys_read)
    # --8<-- [end:rereads]


def costs_table(
    batch: int = 4,
    heads: int = 32,
    head_dim: int = 128,
    seqs: tuple[int, ...] = (1024, 4096, 16384),
    block_m: int = 128,
) -> tuple[list[str], list[list[object]]]:
    """:func:`attention_costs` in bf16 over sequence lengths, causal and not, as ``(headers, rows)``; the last
    column counts K and V once per ``block_m`` queries (:func:`flash_traffic_bytes`)."""
    headers = ["L", "causal", "GFLOP", "pairs kept", "fused MB", "score matrix MB", "FLOP/B fused", "FLOP/B unfused",
               f"FLOP/B, K and V read per {block_m} queries"]  # fmt: skip
    rows = []
    for seq in seqs:
        for causal in (False, True):
            c = attention_costs(batch, heads, seq, seq, head_dim, causal=causal)
            pairs = causal_pairs(seq, seq) if causal else seq * seq
            reread = flash_traffic_bytes(batch, heads, seq, seq, head_dim, block_m, causal=causal)
            rows.append([seq, "yes" if causal else "no", round(c.flops / 1e9, 1), f"{pairs / seq**2:.4f}",
                         round(c.io_bytes / 1e6, 1), round(c.score_bytes / 1e6, 1), round(c.intensity),
                         round(c.unfused_intensity, 1), round(c.flops / reread)])  # fmt: skip
    return headers, rows


# --8<-- [start:kv-cache]
def kv_cache_bytes(layers: int, batch: int, seq: int, kv_heads: int, head_dim: int, dtype: str = "bf16") -> int:
    """Bytes of a key/value cache: a key and a value vector per layer, token and key/value head,
    ``2 · layers · batch · seq · kv_heads · head_dim · bytes``.

    The query heads do not appear: grouped-query attention shrinks the cache by ``heads / kv_heads``.
    """
    for name, value in (("layers", layers), ("batch", batch), ("seq", seq), ("kv_heads", kv_heads),
                        ("head_dim", head_dim)):  # fmt: skip
        positive_int(name, value)
    return 2 * layers * batch * seq * kv_heads * head_dim * element_bytes(dtype)
    # --8<-- [end:kv-cache]


def kv_cache_table(
    layers: int = 32, heads: int = 32, head_dim: int = 128, seq: int = 8192, batch: int = 1
) -> tuple[list[str], list[list[object]]]:
    """Cache sizes of one model shape with multi-head, grouped-query and multi-query attention, bf16 and fp8."""
    headers = ["attention", "kv heads", "bf16 GiB", "fp8 GiB", "per token, bf16 KiB"]
    rows = []
    for label, kv in (("multi-head", heads), ("grouped-query", 8), ("multi-query", 1)):
        bf16 = kv_cache_bytes(layers, batch, seq, kv, head_dim, "bf16")
        fp8 = kv_cache_bytes(layers, batch, seq, kv, head_dim, "fp8")
        rows.append([label, kv, round(bf16 / 2**30, 4), round(fp8 / 2**30, 4), round(bf16 / seq / batch / 2**10)])
    return headers, rows


@dataclass(frozen=True)
class AttentionSummary:
    """The costs of one attention forward pass and of its key/value cache (see :func:`attention_summary`).

    Attributes:
        costs: The forward pass (:func:`attention_costs`).
        kv_per_token: Cache bytes of one token over all layers.
        kv_per_sequence: Cache bytes of one sequence of ``kv_len`` tokens over all layers.
        kv_total: Cache bytes of the whole batch.
    """

    costs: AttentionCosts
    kv_per_token: int
    kv_per_sequence: int
    kv_total: int


# --8<-- [start:summary]
def attention_summary(
    batch: int,
    heads: int,
    q_len: int,
    kv_len: int,
    head_dim: int,
    kv_heads: int | None = None,
    causal: bool = False,
    dtype: str = "bf16",
    layers: int = 1,
) -> AttentionSummary:
    """One layer's forward pass (:func:`attention_costs`) and the key/value cache of ``layers`` such layers
    (:func:`kv_cache_bytes`), per token, per sequence of ``kv_len`` tokens and for the batch.

    Raises:
        ValueError: As :func:`attention_costs`, and for ``layers`` below 1.
    """
    costs = attention_costs(batch, heads, q_len, kv_len, head_dim, kv_heads, causal, dtype)
    kv = heads if kv_heads is None else kv_heads
    return AttentionSummary(
        costs=costs,
        kv_per_token=kv_cache_bytes(layers, 1, 1, kv, head_dim, dtype),
        kv_per_sequence=kv_cache_bytes(layers, 1, kv_len, kv, head_dim, dtype),
        kv_total=kv_cache_bytes(layers, batch, kv_len, kv, head_dim, dtype),
    )
    # --8<-- [end:summary]


def decode_table(
    layers: int = 32, heads: int = 32, head_dim: int = 128, seq: int = 8192, batch: int = 1, bandwidth: float = 3e12
) -> tuple[list[str], list[list[object]]]:
    """One decoding step (one new query per sequence against a cache of ``seq`` tokens) of every layer's attention,
    with multi-head, grouped-query and multi-query attention, bf16: operations, bytes (the cache dominates), FLOP per
    byte, and the time the bytes take at ``bandwidth`` bytes per second.

    Each query head still multiplies with every cached key and value, so the operations do not depend on the
    key/value heads; the bytes do, and the intensity is about ``heads / kv_heads`` FLOP per byte in bf16
    (``4·H·L·d`` operations over ``2·G·L·d`` cached elements of 2 bytes), whatever the batch.
    """
    headers = ["attention", "kv heads", "GFLOP", "MB read", "FLOP/B", "µs at the bandwidth"]
    rows = []
    for label, kv in (("multi-head", heads), ("grouped-query", 8), ("multi-query", 1)):
        c = attention_costs(batch, heads, 1, seq, head_dim, kv_heads=kv)
        flops, moved = layers * c.flops, layers * c.io_bytes
        rows.append([label, kv, round(flops / 1e9, 2), round(moved / 1e6, 1), round(c.intensity, 2),
                     round(moved / bandwidth * 1e6)])  # fmt: skip
    return headers, rows

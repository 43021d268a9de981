"""Counting work: the floating-point operations an operation performs and the fewest bytes it must move.

These two counts turn a time into a rate (TFLOP/s, GB/s), and their ratio, the arithmetic intensity, places an
operation on a roofline. Conventions used throughout:

* a multiply-add counts as two floating-point operations (FLOP);
* bytes are the fewest that device memory must move: every input read once, every output written once;
* a copy of ``n`` bytes moves ``2 n`` bytes (read plus write).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpukb.arguments import flag, integer, positive_int, real

#: Bytes per element of the element types the harness uses. ``tf32`` is stored as float32.
ELEMENT_BYTES = {
    "fp64": 8,
    "fp32": 4,
    "tf32": 4,
    "fp16": 2,
    "bf16": 2,
    "fp8": 1,
    "int64": 8,
    "int32": 4,
    "int16": 2,
    "uint8": 1,
}


def element_bytes(dtype: str) -> int:
    """Bytes per element of a named element type.

    Raises:
        ValueError: If the name is not one of ``ELEMENT_BYTES``.
    """
    try:
        return ELEMENT_BYTES[dtype]
    except (KeyError, TypeError):
        raise ValueError(f"unknown element type {dtype!r}; known: {sorted(ELEMENT_BYTES)}") from None


def _positive(**sizes: int) -> None:
    for name, value in sizes.items():
        positive_int(name, value)


def gemm_flops(m: int, n: int, k: int) -> int:
    """Operations of ``C = A @ B`` with A of shape (m, k) and B of shape (k, n): ``2 m n k``."""
    _positive(m=m, n=n, k=k)
    return 2 * m * n * k


def gemm_bytes(m: int, n: int, k: int, a_bytes: int, b_bytes: int | None = None, c_bytes: int | None = None) -> int:
    """Fewest bytes of ``C = A @ B``: read A and B once, write C once.

    Args:
        m: Rows of A and C.
        n: Columns of B and C.
        k: The shared dimension.
        a_bytes: Bytes per element of A.
        b_bytes: Bytes per element of B (``a_bytes`` when omitted).
        c_bytes: Bytes per element of C (``a_bytes`` when omitted).
    """
    b_bytes = a_bytes if b_bytes is None else b_bytes
    c_bytes = a_bytes if c_bytes is None else c_bytes
    _positive(m=m, n=n, k=k, a_bytes=a_bytes, b_bytes=b_bytes, c_bytes=c_bytes)
    return m * k * a_bytes + k * n * b_bytes + m * n * c_bytes


def causal_pairs(q_len: int, kv_len: int) -> int:
    """Query-key pairs a causal mask keeps, with the mask aligned to the top left (query i sees keys 0..i).

    This is the alignment of ``torch.nn.functional.scaled_dot_product_attention(..., is_causal=True)``.
    """
    _positive(q_len=q_len, kv_len=kv_len)
    full_rows = max(0, q_len - kv_len)  # rows i ≥ kv_len see every key
    partial = min(q_len, kv_len)  # rows 0..partial-1 see i + 1 keys
    return partial * (partial + 1) // 2 + full_rows * kv_len


def attention_flops(batch: int, heads: int, q_len: int, kv_len: int, head_dim: int, causal: bool = False) -> int:
    """Operations of the forward pass of attention, ``softmax(Q Kᵀ) V``, counting the two matrix products.

    Each kept query-key pair costs ``2 head_dim`` for the score and ``2 head_dim`` for its share of the output,
    so the count is ``4 · batch · heads · pairs · head_dim``; a causal mask keeps :func:`causal_pairs` pairs
    instead of ``q_len · kv_len``. The softmax is not counted (as in the FlashAttention papers).
    """
    _positive(batch=batch, heads=heads, q_len=q_len, kv_len=kv_len, head_dim=head_dim)
    pairs = causal_pairs(q_len, kv_len) if flag("causal", causal) else q_len * kv_len
    return 4 * batch * heads * pairs * head_dim


def attention_bytes(
    batch: int, heads: int, q_len: int, kv_len: int, head_dim: int, elem_bytes: int, kv_heads: int | None = None
) -> int:
    """Fewest bytes of the attention forward pass: read Q, K and V once, write the output once.

    With grouped-query attention K and V have ``kv_heads`` heads (``None``: as many as ``heads``), which must divide
    ``heads``: Q and the output are counted over the query heads, K and V over theirs.
    """
    _positive(batch=batch, heads=heads, q_len=q_len, kv_len=kv_len, head_dim=head_dim, elem_bytes=elem_bytes)
    kv = heads if kv_heads is None else positive_int("kv_heads", kv_heads)
    if heads % kv:
        raise ValueError(f"kv_heads ({kv}) must divide heads ({heads})")
    return batch * head_dim * elem_bytes * (2 * heads * q_len + 2 * kv * kv_len)


def copy_bytes(nbytes: int) -> int:
    """Bytes device memory moves to copy ``nbytes`` bytes: each is read once and written once."""
    _positive(nbytes=nbytes)
    return 2 * nbytes


def arithmetic_intensity(flops: float, nbytes: float) -> float:
    """FLOP per byte.

    Raises:
        TypeError: If either is not a real number.
        ValueError: If ``flops`` is negative or ``nbytes`` is not positive, or either is not finite.
    """
    flops, nbytes = real("flops", flops), real("nbytes", nbytes)
    if flops < 0 or nbytes <= 0:
        raise ValueError(f"need flops ≥ 0 and bytes > 0; got flops={flops}, bytes={nbytes}")
    return flops / nbytes


@dataclass(frozen=True)
class Conv2dCounts:
    """What a 2-D convolution computes and touches.

    Attributes:
        output_shape: (N, C_out, H_out, W_out).
        macs: Multiply-adds of the convolution proper.
        flops: ``2 · macs`` plus one addition per output element for the bias.
        params: Weights plus biases.
        input_elems: Elements of the input tensor.
        output_elems: Elements of the output tensor.
    """

    output_shape: tuple[int, int, int, int]
    macs: int
    flops: int
    params: int
    input_elems: int
    output_elems: int

    def bytes(self, elem_bytes: int) -> int:
        """Fewest bytes moved: the input and the parameters read once, the output written once."""
        _positive(elem_bytes=elem_bytes)
        return (self.input_elems + self.params + self.output_elems) * elem_bytes


def conv2d_counts(
    input_shape: tuple[int, int, int, int],
    out_channels: int,
    kernel: tuple[int, int],
    stride: int = 1,
    padding: int = 0,
    bias: bool = True,
) -> Conv2dCounts:
    """Count a ``torch.nn.Conv2d`` forward pass (no groups, no dilation).

    Args:
        input_shape: (N, C_in, H, W).
        out_channels: C_out.
        kernel: (kH, kW).
        stride: The same stride in both directions.
        padding: The same zero padding on every side.
        bias: Whether the layer adds a bias per output channel.

    Raises:
        ValueError: If the kernel does not fit the padded input, or a size is not positive.
    """
    bias = flag("bias", bias)
    for label, shape, size in (("input_shape", input_shape, 4), ("kernel", kernel, 2)):
        if isinstance(shape, str | bytes) or not isinstance(shape, tuple | list):
            raise TypeError(f"{label} must be a tuple of {size} ints; got {shape!r} ({type(shape).__name__})")
    if len(input_shape) != 4 or len(kernel) != 2:
        raise ValueError(f"input_shape must be (N, C, H, W) and kernel (kH, kW); got {input_shape}, {kernel}")
    n, c_in, h, w = input_shape
    kh, kw = kernel
    _positive(n=n, c_in=c_in, h=h, w=w, out_channels=out_channels, kh=kh, kw=kw, stride=stride)
    integer("padding", padding, minimum=0)
    h_out = (h + 2 * padding - kh) // stride + 1
    w_out = (w + 2 * padding - kw) // stride + 1
    if h_out < 1 or w_out < 1:
        raise ValueError(f"a {kh}×{kw} kernel does not fit a {h}×{w} input padded by {padding}")
    output_elems = n * out_channels * h_out * w_out
    macs = output_elems * c_in * kh * kw
    return Conv2dCounts(
        output_shape=(n, out_channels, h_out, w_out),
        macs=macs,
        flops=2 * macs + (output_elems if bias else 0),
        params=out_channels * c_in * kh * kw + (out_channels if bias else 0),
        input_elems=n * c_in * h * w,
        output_elems=output_elems,
    )


def intensity_examples() -> list[tuple[str, int, int]]:
    """The operations of the table of arithmetic intensities (FP16 data), as (name, FLOPs, bytes)
    counted from each operation's definition."""
    linear = [(512, "batch 512"), (1, "batch 1")]
    rows = [
        (f"linear layer, 1024 → 4096, {label}", gemm_flops(m, 4096, 1024), gemm_bytes(m, 4096, 1024, 2))
        for m, label in linear
    ]
    # the largest of 9 values takes 8 comparisons (counted as operations; none is a multiply or an add)
    rows.append(("3×3 max pooling, unit stride (8 comparisons per output)", 8, 2 + 2))
    rows.append(("ReLU (per element)", 1, 2 + 2))
    return rows

"""A small worked CNN example (conv → ReLU → max pool → flatten → dense → softmax): the shape
after each stage and the parameter count, computed, and the example's own numbers recomputed.

The network and the example's numbers are in ``gpukb/data/cudnn/small_cnn.toml``. Shapes are NHWC, as the
example writes them.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from pydantic import Field

from gpukb.arguments import positive_int
from gpukb.cudnn.convolution import output_size
from gpukb.data import data_text
from gpukb.schema import StrictModel, parse_toml, validate_entries

FILE = "cudnn/small_cnn.toml"


class Network(StrictModel):
    """The example: the network (input (N, H, W, C), ``filters`` square filters of ``kernel``, pooling window and
    stride, dense units) and its printed numbers (the convolution's output, NHWC, and what it claims follows)."""

    id: str = Field(pattern=r"^[a-z0-9-]+$")
    input_nhwc: list[int] = Field(min_length=4, max_length=4)
    filters: int = Field(gt=0)
    kernel: int = Field(gt=0)
    conv_stride: int = Field(gt=0)
    conv_pad: int = Field(ge=0)
    pool: int = Field(gt=0)
    pool_stride: int = Field(gt=0)
    dense_units: int = Field(gt=0)
    conv_output: list[list[list[float]]]
    claimed_flat: list[int]
    claimed_params: int
    claimed_softmax: list[float]


def parse(text: str, file: str = FILE) -> list[Network]:
    """Parse the file: its ``[[example]]`` entries.

    Raises:
        ValueError: Naming the file, the entry and the field.
    """
    return validate_entries(Network, parse_toml(text, file, ("example",)).get("example"), file, "example")


@cache
def load() -> Network:
    """The worked example (the file's one entry)."""
    (example,) = parse(data_text(FILE))
    return example


def stages(net: Network | None = None, dense_units: int | None = None) -> list[tuple[str, tuple[int, ...], int]]:
    """Each stage as (name, output shape, trainable parameters): shapes NHWC, then (N, features)."""
    net = net or load()
    units = net.dense_units if dense_units is None else positive_int("dense_units", dense_units)
    n, h, w, c = net.input_nhwc
    ho = output_size(h, net.kernel, net.conv_pad, net.conv_stride)
    wo = output_size(w, net.kernel, net.conv_pad, net.conv_stride)
    conv_params = net.kernel * net.kernel * c * net.filters + net.filters  # weights + one bias per filter
    ph, pw = output_size(ho, net.pool, 0, net.pool_stride), output_size(wo, net.pool, 0, net.pool_stride)
    flat = ph * pw * net.filters
    return [
        ("input", (n, h, w, c), 0),
        (f"conv {net.kernel}×{net.kernel}, {net.filters} filters, stride {net.conv_stride}", (n, ho, wo, net.filters),
         conv_params),
        ("ReLU", (n, ho, wo, net.filters), 0),
        (f"max pool {net.pool}×{net.pool}, stride {net.pool_stride}", (n, ph, pw, net.filters), 0),
        ("flatten", (n, flat), 0),
        (f"dense, {units} units", (n, units), flat * units + units),
        ("softmax", (n, units), 0),
    ]  # fmt: skip


def parameters(net: Network | None = None, dense_units: int | None = None) -> int:
    """Trainable parameters of the network (convolution and dense weights and biases)."""
    return sum(p for _, _, p in stages(net, dense_units))


def max_pool_nhwc(x: np.ndarray, size: int, stride: int) -> np.ndarray:
    """Max pooling of an NHWC array, no padding."""
    n, h, w, c = x.shape
    ho, wo = output_size(h, size, 0, stride), output_size(w, size, 0, stride)
    out = np.full((n, ho, wo, c), -np.inf)
    for i in range(size):
        for j in range(size):
            out = np.maximum(out, x[:, i : i + stride * (ho - 1) + 1 : stride, j : j + stride * (wo - 1) + 1 : stride])
    return out


def softmax(v: np.ndarray) -> np.ndarray:
    """Softmax of a vector, shifted by its maximum."""
    e = np.exp(np.asarray(v, dtype=np.float64) - np.max(v))
    return e / e.sum()


def example_stages() -> dict[str, np.ndarray]:
    """The example's numbers recomputed from its convolution output: ReLU, pooling, both flattening orders, and
    the softmax of the flattened vector."""
    data = load()
    qa = np.asarray(data.conv_output, dtype=np.float64)[None]  # (1, 3, 3, 2) NHWC
    qb = np.maximum(qa, 0)
    qc = max_pool_nhwc(qb, data.pool, data.pool_stride)
    flat_nhwc = qc.reshape(1, -1)  # row-major over (N, H, W, C): the order of the array as written
    flat_nchw = qc.transpose(0, 3, 1, 2).reshape(1, -1)  # channel by channel: torch's flatten of an NCHW tensor
    return {"conv": qa, "relu": qb, "pool": qc, "flat_nhwc": flat_nhwc, "flat_nchw": flat_nchw,
            "softmax_of_flat": softmax(flat_nchw[0])}  # fmt: skip

"""The ResNet-50 convolution shapes the chapter times, read from ``gpukb/data/cudnn/resnet50_layers.toml``."""

from __future__ import annotations

import datetime as dt
from functools import cache

from pydantic import Field

from gpukb.data import data_text
from gpukb.measuring.counting import Conv2dCounts, conv2d_counts
from gpukb.schema import StrictModel, parse_toml, validate_entries

#: The file this module reads, under the ``gpukb.data`` package.
FILE = "cudnn/resnet50_layers.toml"


class Layer(StrictModel):
    """One convolution of the network: square input ``hw × hw`` with ``c`` channels, ``k`` filters of
    ``kernel × kernel``, the same padding and stride in both directions, no bias (a batch norm follows)."""

    name: str = Field(pattern=r"^[\w.-]{1,63}$")
    c: int = Field(gt=0)
    hw: int = Field(gt=0)
    k: int = Field(gt=0)
    kernel: int = Field(gt=0)
    pad: int = Field(ge=0)
    stride: int = Field(gt=0)


class LayerTable(StrictModel):
    """The file: its source, the day it was checked, the batch size, the layers."""

    source: str = Field(min_length=10)
    checked: dt.date
    batch: int = Field(gt=0)
    layers: list[Layer]


def parse(text: str, file: str = FILE) -> LayerTable:
    """Parse the layer file.

    Raises:
        ValueError: Naming the file, the layer and the field, for an unknown key, a wrong type or a repeated name.
    """
    data = parse_toml(text, file, ("source", "checked", "batch", "layer"))
    layers = validate_entries(Layer, data.get("layer"), file, "layer", key="name")
    head = {key: data.get(key) for key in ("source", "checked", "batch")}
    missing = [key for key, value in head.items() if value is None]
    if missing:
        raise ValueError(f"{file}: missing top-level keys {missing}")
    return LayerTable(**head, layers=layers)


@cache
def load() -> LayerTable:
    """The committed layer file."""
    return parse(data_text(FILE))


def counts(layer: Layer, batch: int | None = None) -> Conv2dCounts:
    """FLOPs, parameters and elements of one layer's forward pass (no bias), by the performance chapter's
    counter (:func:`gpukb.measuring.counting.conv2d_counts`)."""
    n = load().batch if batch is None else batch
    return conv2d_counts((n, layer.c, layer.hw, layer.hw), layer.k, (layer.kernel, layer.kernel), layer.stride,
                         layer.pad, bias=False)  # fmt: skip

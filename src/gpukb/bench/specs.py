"""Datasheet figures of GPUs, with their sources, from ``gpukb/data/gpu_specs.toml``.

Each figure carries its source and a status: ``confirmed`` (read in the primary source itself), ``secondary``
(the primary source is named but the figure was read only in copies of it) or ``unconfirmed``. Tensor-core
rates published "with sparsity" are stored as published and halved by :meth:`Figure.dense`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

#: Quantity name → (unit, label).
QUANTITIES = {
    "sm_count": ("", "SMs"),
    "boost_clock": ("MHz", "boost clock"),
    "memory": ("GB", "memory"),
    "memory_bandwidth": ("GB/s", "memory bandwidth"),
    "l2_cache": ("MB", "L2 cache"),
    "fp64": ("TFLOP/s", "FP64 (vector)"),
    "fp64_tensor": ("TFLOP/s", "FP64 tensor core"),
    "fp32": ("TFLOP/s", "FP32 (vector)"),
    "tf32_tensor": ("TFLOP/s", "TF32 tensor core, dense"),
    "fp16_tensor": ("TFLOP/s", "FP16 tensor core, dense"),
    "bf16_tensor": ("TFLOP/s", "BF16 tensor core, dense"),
    "fp8_tensor": ("TFLOP/s", "FP8 tensor core, dense"),
    "int8_tensor": ("TOPS", "INT8 tensor core, dense"),
}
STATUSES = ("confirmed", "secondary", "unconfirmed")
#: The datasheet quantity that bounds a matrix product of each element type of the harness.
GEMM_QUANTITY = {
    "fp32": "fp32",
    "tf32": "tf32_tensor",
    "fp16": "fp16_tensor",
    "bf16": "bf16_tensor",
    "fp8": "fp8_tensor",
}


@dataclass(frozen=True)
class Source:
    """A document figures were checked against."""

    id: str
    title: str
    url: str


@dataclass(frozen=True)
class Figure:
    """One datasheet figure.

    Attributes:
        gpu: The GPU's id.
        quantity: One of ``QUANTITIES``.
        value: The value as published.
        source: The source's id.
        status: One of ``STATUSES``.
        sparsity: Whether the published value assumes 2:4 structured sparsity.
        note: Anything a reader should know next to the number.
    """

    gpu: str
    quantity: str
    value: float
    source: str
    status: str
    sparsity: bool = False
    note: str = ""

    @property
    def dense(self) -> float:
        """The value without structured sparsity (half the published value where it assumes sparsity)."""
        return self.value / 2 if self.sparsity else self.value

    @property
    def unit(self) -> str:
        """The quantity's unit."""
        return QUANTITIES[self.quantity][0]


@dataclass(frozen=True)
class Gpu:
    """A GPU and its figures.

    Attributes:
        id: Short identifier, e.g. ``"h100-sxm5"``.
        name: Display name.
        architecture: e.g. ``"Hopper"``.
        device_names: Substrings of the names torch reports for this GPU.
        evidence: Where the figures were read, when not in the primary source itself.
        figures: Quantity → figure, the base GPU's included.
    """

    id: str
    name: str
    architecture: str
    device_names: tuple[str, ...]
    evidence: str
    figures: dict[str, Figure] = field(default_factory=dict)

    def figure(self, quantity: str) -> Figure | None:
        """The figure for a quantity, or ``None`` where the table has none."""
        if quantity not in QUANTITIES:
            raise ValueError(f"unknown quantity {quantity!r}; quantities: {list(QUANTITIES)}")
        return self.figures.get(quantity)

    def matches(self, device_name: str) -> bool:
        """Whether a device name as torch reports it (``"NVIDIA H100 80GB HBM3"``) is this GPU."""
        return any(part.lower() in device_name.lower() for part in self.device_names)


@dataclass(frozen=True)
class SpecTable:
    """All GPUs and sources, and the date the figures were checked."""

    checked: str
    sources: dict[str, Source]
    gpus: dict[str, Gpu]

    def for_device(self, device_name: str) -> Gpu | None:
        """The GPU whose ``device_names`` match a device name, or ``None``."""
        found = [gpu for gpu in self.gpus.values() if gpu.matches(device_name)]
        return found[0] if len(found) == 1 else None

    def gpu(self, gpu_id: str) -> Gpu:
        """A GPU by id.

        Raises:
            KeyError: If there is none; the message lists the ids.
        """
        try:
            return self.gpus[gpu_id]
        except KeyError:
            raise KeyError(f"no GPU {gpu_id!r} in the spec table; ids: {sorted(self.gpus)}") from None


def parse(data: dict) -> SpecTable:
    """Validate parsed TOML and build the table.

    Raises:
        ValueError: For an unknown quantity, status or source, a figure for an unknown GPU, a duplicate
            figure, or a non-positive value; the message names the entry and what is allowed.
    """
    checked = data.get("checked")
    if not isinstance(checked, str):
        raise ValueError("gpu_specs: 'checked' (the date the figures were checked) is missing")
    sources = {sid: Source(sid, s["title"], s["url"]) for sid, s in data.get("sources", {}).items()}
    raw_gpus = {g["id"]: g for g in data.get("gpu", [])}
    figures: dict[str, dict[str, Figure]] = {gid: {} for gid in raw_gpus}
    for index, raw in enumerate(data.get("figure", [])):
        label = f"figure #{index + 1} ({raw.get('gpu')}, {raw.get('quantity')})"
        if raw.get("gpu") not in raw_gpus:
            raise ValueError(f"{label}: unknown gpu; gpus: {sorted(raw_gpus)}")
        if raw.get("quantity") not in QUANTITIES:
            raise ValueError(f"{label}: unknown quantity; allowed: {list(QUANTITIES)}")
        if raw.get("status") not in STATUSES:
            raise ValueError(f"{label}: status {raw.get('status')!r}; allowed: {list(STATUSES)}")
        if raw.get("source") not in sources:
            raise ValueError(f"{label}: source {raw.get('source')!r}; sources: {sorted(sources)}")
        value = raw.get("value")
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ValueError(f"{label}: value must be a positive number; got {value!r}")
        if raw["quantity"] in figures[raw["gpu"]]:
            raise ValueError(f"{label}: listed twice")
        figures[raw["gpu"]][raw["quantity"]] = Figure(
            gpu=raw["gpu"],
            quantity=raw["quantity"],
            value=float(value),
            source=raw["source"],
            status=raw["status"],
            sparsity=bool(raw.get("sparsity", False)),
            note=raw.get("note", ""),
        )
    gpus = {}
    for gid, raw in raw_gpus.items():
        merged = dict(figures[raw["base"]]) if raw.get("base") else {}
        merged.update(figures[gid])
        gpus[gid] = Gpu(
            id=gid,
            name=raw["name"],
            architecture=raw["architecture"],
            device_names=tuple(raw.get("device_names", ())),
            evidence=raw.get("evidence", ""),
            figures=merged,
        )
    return SpecTable(checked=checked, sources=sources, gpus=gpus)


@cache
def load() -> SpecTable:
    """The project's spec table, validated."""
    text = resources.files("gpukb.data").joinpath("gpu_specs.toml").read_text(encoding="utf-8")
    return parse(tomllib.loads(text))

"""Datasheet figures of GPUs, with their sources, from ``gpukb/data/gpu_specs.toml``.

Each figure carries its source and a status: ``confirmed`` (read in the primary source itself), ``secondary``
(the primary source is named but the figure was read only in copies of it) or ``unconfirmed``. Tensor-core
rates published "with sparsity" are stored as published and halved by :attr:`Figure.dense`. The file is read
into typed models (:mod:`gpukb.schema`): an unknown key, a wrong type, a missing field, a repeated entry or a
reference to an unknown GPU or source fails with the file, the entry and the field named.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Literal, get_args

from pydantic import Field

from gpukb.data import data_text
from gpukb.schema import StrictModel, parse_toml, validate_entries

#: The file this module reads, in the ``gpukb.data`` package.
FILE = "gpu_specs.toml"

Quantity = Literal[
    "sm_count",
    "boost_clock",
    "memory",
    "memory_bandwidth",
    "l2_cache",
    "fp64",
    "fp64_tensor",
    "fp32",
    "tf32_tensor",
    "fp16_tensor",
    "bf16_tensor",
    "fp8_tensor",
    "int8_tensor",
]
Status = Literal["confirmed", "secondary", "unconfirmed"]

#: Quantity name → (unit, label), in the order tables list them.
QUANTITIES = {
    "sm_count": ("", "SMs (AMD: compute units)"),
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
STATUSES: tuple[str, ...] = get_args(Status)
#: The datasheet quantity that bounds a matrix product of each element type of the harness.
GEMM_QUANTITY = {
    "fp32": "fp32",
    "tf32": "tf32_tensor",
    "fp16": "fp16_tensor",
    "bf16": "bf16_tensor",
    "fp8": "fp8_tensor",
}


class Source(StrictModel):
    """A document figures were checked against (``[sources.<id>]``)."""

    id: str
    title: str
    url: str = Field(pattern=r"^https://")


class GpuEntry(StrictModel):
    """A ``[[gpu]]`` entry as written in the file.

    Attributes:
        id: Short identifier, e.g. ``"h100-sxm5"``.
        name: Display name.
        architecture: e.g. ``"Hopper"``.
        base: Another GPU's id whose figures this one shares unless it lists its own.
        device_names: Substrings of the names torch reports for this GPU.
        evidence: Where the figures were read, when not in the primary source itself.
    """

    id: str
    name: str
    architecture: str
    base: str | None = None
    device_names: list[str] = Field(default_factory=list)
    evidence: str = ""


class Figure(StrictModel):
    """One datasheet figure (a ``[[figure]]`` entry).

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
    quantity: Quantity
    value: float = Field(gt=0, allow_inf_nan=False)
    source: str
    status: Status
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


class Gpu(StrictModel):
    """A GPU and its figures, its base GPU's included (see :class:`GpuEntry` for the other attributes)."""

    id: str
    name: str
    architecture: str
    device_names: tuple[str, ...]
    evidence: str
    figures: dict[str, Figure] = Field(default_factory=dict)

    def figure(self, quantity: str) -> Figure | None:
        """The figure for a quantity, or ``None`` where the table has none."""
        if quantity not in QUANTITIES:
            raise ValueError(f"unknown quantity {quantity!r}; quantities: {list(QUANTITIES)}")
        return self.figures.get(quantity)

    def matches(self, device_name: str) -> bool:
        """Whether a device name as torch reports it (``"NVIDIA H100 80GB HBM3"``) is this GPU."""
        return any(part.lower() in device_name.lower() for part in self.device_names)


class SpecTable(StrictModel):
    """All GPUs and sources, and the date the figures were checked."""

    checked: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
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


def _figure_key(raw: object) -> str:
    if not isinstance(raw, Mapping):
        return "not a table"
    return f"{raw.get('gpu', 'no gpu')}/{raw.get('quantity', 'no quantity')}"


def parse(text: str, file: str = FILE) -> SpecTable:
    """Read the TOML text of a spec table into models and check its cross-references.

    Raises:
        ValueError: ``<file>: <table> entry <n> (<id>): <field>: <what is wrong>`` for an unknown key, a wrong
            type, a missing field, a repeated id or figure, or a reference to an unknown GPU or source.
    """
    data = parse_toml(text, file, ("checked", "sources", "gpu", "figure"))
    checked = data.get("checked")
    if not isinstance(checked, str):
        raise ValueError(
            f"{file}: checked (the date the figures were checked, 'YYYY-MM-DD') is missing or not a string"
        )
    raw_sources = data.get("sources", {})
    if not isinstance(raw_sources, Mapping):
        raise ValueError(f"{file}: sources must be tables ([sources.<id>]); got {type(raw_sources).__name__}")
    sources = validate_entries(
        Source,
        [{"id": sid, **raw} if isinstance(raw, Mapping) else raw for sid, raw in raw_sources.items()],
        file,
        "sources",
    )
    gpus = validate_entries(GpuEntry, data.get("gpu", []), file, "gpu")
    figures = validate_entries(Figure, data.get("figure", []), file, "figure", key=_figure_key)
    source_ids = [s.id for s in sources]
    gpu_ids = [g.id for g in gpus]
    for index, gpu in enumerate(gpus, start=1):
        if gpu.base is not None and gpu.base not in gpu_ids:
            raise ValueError(f"{file}: gpu entry {index} ({gpu.id}): base: unknown GPU {gpu.base!r}; gpus: {gpu_ids}")
    by_gpu: dict[str, dict[str, Figure]] = {gid: {} for gid in gpu_ids}
    for index, figure in enumerate(figures, start=1):
        where = f"{file}: figure entry {index} ({figure.gpu}/{figure.quantity})"
        if figure.gpu not in by_gpu:
            raise ValueError(f"{where}: gpu: unknown GPU {figure.gpu!r}; gpus: {gpu_ids}")
        if figure.source not in source_ids:
            raise ValueError(f"{where}: source: unknown source {figure.source!r}; sources: {sorted(source_ids)}")
        by_gpu[figure.gpu][figure.quantity] = figure
    resolved = {}
    for entry in gpus:
        merged = dict(by_gpu[entry.base]) if entry.base else {}
        merged.update(by_gpu[entry.id])
        resolved[entry.id] = Gpu(
            id=entry.id,
            name=entry.name,
            architecture=entry.architecture,
            device_names=tuple(entry.device_names),
            evidence=entry.evidence,
            figures=merged,
        )
    return SpecTable(checked=checked, sources={s.id: s for s in sources}, gpus=resolved)


@cache
def load() -> SpecTable:
    """The project's spec table, validated."""
    return parse(data_text(FILE))


def datasheet_for(device_name: str) -> Gpu | None:
    """The datasheet entry of a device as torch names it (a run's ``run.gpu.name``), or ``None``.

    Raises:
        TypeError: If ``device_name`` is not a string.
    """
    if not isinstance(device_name, str):
        raise TypeError(f"device_name must be a string such as 'NVIDIA H100 80GB HBM3'; got {device_name!r}")
    return load().for_device(device_name)


def datasheet_peak(gpu: Gpu | None, dtype: str) -> Figure | None:
    """The datasheet figure that bounds a matrix product of ``dtype`` on ``gpu``, if the table has it.

    Raises:
        TypeError: If ``gpu`` is neither a ``Gpu`` nor ``None``.
        ValueError: For a ``dtype`` not in ``GEMM_QUANTITY``.
    """
    if gpu is not None and not isinstance(gpu, Gpu):
        raise TypeError(f"gpu must be a Gpu from the spec table or None; got {type(gpu).__name__}")
    if not isinstance(dtype, str) or dtype not in GEMM_QUANTITY:
        raise ValueError(f"unknown matrix-product dtype {dtype!r}; dtypes: {list(GEMM_QUANTITY)}")
    return None if gpu is None else gpu.figure(GEMM_QUANTITY[dtype])


def datasheet_ridge(gpu: Gpu | None, dtype: str) -> float | None:
    """The datasheet ridge point (FLOP per byte) of ``gpu`` for ``dtype``: dense peak over memory bandwidth."""
    peak = datasheet_peak(gpu, dtype)
    bandwidth = None if gpu is None else gpu.figure("memory_bandwidth")
    if peak is None or bandwidth is None:
        return None
    return peak.dense * 1e3 / bandwidth.value

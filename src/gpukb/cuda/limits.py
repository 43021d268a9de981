"""Resource limits of an SM by compute capability, from ``gpukb/data/cuda/limits.toml``.

Each ``[[capability]]`` entry holds the limits the occupancy calculator needs (threads, warps, blocks, registers,
shared memory per SM and per block, allocation units, carveout steps, cluster sizes), with the ids of the sources
they were checked against. :func:`capability` returns one entry; an unknown compute capability is an error that
lists the known ones.
"""

from __future__ import annotations

from functools import cache

from pydantic import Field, model_validator

from gpukb.data import data_text
from gpukb.schema import StrictModel, parse_toml, validate_document, validate_entries

DATA_FILE = "cuda/limits.toml"


class Source(StrictModel):
    """A document the limits were checked against (``[sources.<id>]``)."""

    title: str
    url: str = Field(pattern=r"^https://")


# --8<-- [start:model]
class Capability(StrictModel):
    """The limits of one compute capability (a ``[[capability]]`` entry). Sizes in bytes, registers in 32-bit
    registers; ``carveouts_kib`` are the shared-memory capacities (KiB) an SM can be configured to."""

    cc: str = Field(pattern=r"^\d+\.\d+$")
    name: str
    max_threads_per_block: int = Field(gt=0)
    max_warps_per_sm: int = Field(gt=0)
    max_blocks_per_sm: int = Field(gt=0)
    registers_per_sm: int = Field(gt=0)
    registers_per_block: int = Field(gt=0)
    max_registers_per_thread: int = Field(gt=0)
    register_allocation_unit: int = Field(gt=0)
    register_sub_partitions: int = Field(gt=0)
    shared_per_sm: int = Field(gt=0)
    shared_per_block: int = Field(gt=0)
    shared_per_block_optin: int = Field(gt=0)
    reserved_shared_per_block: int = Field(ge=0)
    shared_allocation_unit: int = Field(gt=0)
    carveouts_kib: list[int]
    max_cluster_size: int | None = None
    max_cluster_size_nonportable: int | None = None
    sources: list[str]

    @model_validator(mode="after")
    def _consistent(self) -> Capability:
        if self.shared_per_block_optin + self.reserved_shared_per_block > self.shared_per_sm:
            raise ValueError(
                f"shared_per_block_optin + reserved_shared_per_block ({self.shared_per_block_optin} + "
                f"{self.reserved_shared_per_block}) exceeds shared_per_sm ({self.shared_per_sm})"
            )
        if self.shared_per_block > self.shared_per_block_optin:
            raise ValueError("shared_per_block exceeds shared_per_block_optin")
        if self.carveouts_kib != sorted(set(self.carveouts_kib)) or self.carveouts_kib[-1] * 1024 != self.shared_per_sm:
            raise ValueError(
                f"carveouts_kib must rise strictly and end at shared_per_sm / 1024; got {self.carveouts_kib}"
            )
        if (self.max_cluster_size is None) != (self.max_cluster_size_nonportable is None):
            raise ValueError("give both max_cluster_size and max_cluster_size_nonportable, or neither")
        return self

    @property
    def warp_size(self) -> int:
        """Threads per warp: 32 on every compute capability in the table."""
        return 32

    @property
    def max_threads_per_sm(self) -> int:
        """Resident threads per SM (warps × 32)."""
        return self.max_warps_per_sm * self.warp_size

    # --8<-- [end:model]


class LaunchLimits(StrictModel):
    """The launch limits every capability in the file shares (``[launch]``): block and grid sizes per axis
    (x, y, z) and threads per block."""

    max_block_dim: list[int] = Field(min_length=3, max_length=3)
    max_threads_per_block: int = Field(gt=0)
    max_grid_dim: list[int] = Field(min_length=3, max_length=3)
    sources: list[str]


class LimitsFile(StrictModel):
    """The whole file: the date checked, the sources, the launch limits and the capabilities by ``cc``."""

    checked: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    sources: dict[str, Source]
    launch: LaunchLimits
    capabilities: dict[str, Capability]


def parse(text: str, file: str = DATA_FILE) -> LimitsFile:
    """Parse and validate the limits file's text.

    Raises:
        ValueError: Naming the file, the entry and the field: a wrong type, a missing or unknown field, a
            duplicate ``cc``, inconsistent sizes, or a source id that ``[sources]`` lacks.
    """
    data = parse_toml(text, file, ("checked", "sources", "launch", "capability"))
    sources = {key: Source.model_validate(value) for key, value in data.get("sources", {}).items()}
    launch = validate_document(LaunchLimits, data.get("launch"), f"{file}: [launch]")
    entries = validate_entries(Capability, data.get("capability"), file, "capability", key="cc")
    for where, used in (("launch", launch.sources), *((f"capability {e.cc}", e.sources) for e in entries)):
        missing = [s for s in used if s not in sources]
        if missing:
            raise ValueError(f"{file}: {where}: unknown sources {missing}; known: {sorted(sources)}")
    for entry in entries:
        if entry.max_threads_per_block != launch.max_threads_per_block:
            raise ValueError(
                f"{file}: capability {entry.cc}: max_threads_per_block {entry.max_threads_per_block} differs from "
                f"[launch] max_threads_per_block {launch.max_threads_per_block}"
            )
    return LimitsFile(
        checked=data.get("checked", ""), sources=sources, launch=launch, capabilities={e.cc: e for e in entries}
    )


@cache
def table() -> LimitsFile:
    """The packaged limits file, parsed once."""
    return parse(data_text(DATA_FILE))


def launch() -> LaunchLimits:
    """The launch limits (block and grid sizes) every capability in the table shares."""
    return table().launch


def known() -> list[str]:
    """The compute capabilities in the table, oldest first."""
    return sorted(table().capabilities, key=lambda cc: tuple(int(p) for p in cc.split(".")))


def capability(cc: str | tuple[int, int]) -> Capability:
    """The limits of a compute capability given as ``"9.0"`` or ``(9, 0)``.

    Raises:
        ValueError: For a compute capability the table does not hold (the message lists those it does).
        TypeError: For anything but a string or a pair of ints.
    """
    if isinstance(cc, tuple) and len(cc) == 2 and all(isinstance(p, int) for p in cc):
        cc = f"{cc[0]}.{cc[1]}"
    if not isinstance(cc, str):
        raise TypeError(f"compute capability must be a string like '9.0' or a pair (9, 0); got {cc!r}")
    found = table().capabilities.get(cc)
    if found is None:
        raise ValueError(f"compute capability {cc!r} is not in {DATA_FILE}; known: {known()}")
    return found

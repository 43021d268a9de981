"""The distributed chapter's schematic figures: the ring all-reduce step by step, and one FSDP step's all-gathers,
computation and reduce-scatters unit by unit.

The ring figure draws the state of the library's own simulation (:func:`ring_states`, from
:func:`gpukb.distributed.collectives.ring_reduce_scatter` and ``ring_all_gather`` with a trace); the FSDP figure's
bytes come from :func:`unit_traffic` (the measured model's block and :mod:`gpukb.distributed.memory`). Tests check
both data functions; :mod:`gpukb.distributed.pages` alone turns a figure into inline SVG.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from gpukb.arguments import choice, integer
from gpukb.distributed import collectives, memory
from gpukb.distributed.model import ModelConfig
from gpukb.figures import COLOURS, box, schematic


def ring_states(ranks: int = 4) -> list[tuple[str, list[list[int]]]]:
    """After each step of a ring all-reduce: ``(label, held)``, ``held[r][c]`` the number of ranks whose values
    rank ``r``'s copy of chunk ``c`` sums (``ranks`` when complete).

    Each rank starts with ``2**r`` everywhere, so a chunk's value, read as bits, says whose values it holds.

    Raises:
        ValueError: For fewer than 2 or more than 8 ranks (a figure of more is unreadable).
    """
    p = integer("ranks", ranks, minimum=2, maximum=8)
    rs_trace: list = []
    ag_trace: list = []
    rs = collectives.ring_reduce_scatter([np.full(p, 2.0**r) for r in range(p)], trace=rs_trace)
    collectives.ring_all_gather(rs.outputs, trace=ag_trace)

    def counts(chunks: list[np.ndarray]) -> list[int]:
        return [bin(int(c[0])).count("1") for c in chunks]

    states = [("start", [[1] * p for _ in range(p)])]
    states += [(f"reduce-scatter {t + 1}", [counts(rank) for rank in step]) for t, step in enumerate(rs_trace)]
    last = states[-1][1]
    for t, step in enumerate(ag_trace):
        held = [[p if c in step[r] else last[r][c] for c in range(p)] for r in range(p)]
        states.append((f"all-gather {t + 1}", held))
    return states


def ring_figure(ranks: int = 4) -> Figure:
    """A panel per step: ranks down, chunks across, each cell the number of ranks summed into that copy; complete
    chunks in green."""
    states = ring_states(ranks)
    p = ranks
    per_row = 4
    cell = 0.3
    panel_w, panel_h = p * cell + 0.35, p * cell + 0.45
    rows = -(-len(states) // per_row)
    fig, ax = schematic(per_row * panel_w + 0.1, rows * panel_h + 0.55)
    for k, (label, held) in enumerate(states):
        px = 0.3 + (k % per_row) * panel_w
        py = rows * panel_h + 0.05 - (k // per_row + 1) * panel_h
        ax.text(px + p * cell / 2, py + p * cell + 0.08, label, ha="center", fontsize=8.5)
        for r in range(p):
            for c in range(p):
                n = held[r][c]
                colour = COLOURS[2] if n == p else (COLOURS[1] if n > 1 else None)
                box(ax, px + c * cell, py + (p - 1 - r) * cell, cell, cell, str(n), colour, fontsize=7.5)
            if k % per_row == 0:
                ax.text(px - 0.05, py + (p - 1 - r + 0.5) * cell, f"r{r}", ha="right", va="center", fontsize=7)
    ax.text(0.05, rows * panel_h + 0.5, f"{p} ranks (r0–r{p - 1}, down) × {p} chunks (across): how many ranks' values "
            "each copy of a chunk sums", fontsize=8.5, va="top")  # fmt: skip
    ax.text(0.05, rows * panel_h + 0.28, f"{p - 1} reduce-scatter steps leave each rank one complete chunk (green); "
            f"{p - 1} all-gather steps pass them on", fontsize=8.5, va="top")  # fmt: skip
    return fig


@dataclass(frozen=True)
class UnitTraffic:
    """What one FSDP unit (a transformer block) moves and holds on each of ``world`` ranks.

    Attributes:
        params: The unit's parameters.
        world: Ranks.
        gathered_bytes: Bytes each rank receives to all-gather the unit in ``param_dtype``.
        scattered_bytes: Bytes each rank sends to reduce-scatter the unit's gradients in ``reduce_dtype``.
        transient_bytes: Bytes the unit holds only while it is computed
            (:func:`gpukb.distributed.memory.fsdp2_unit_transient_bytes_per_param`).
    """

    params: int
    world: int
    gathered_bytes: float
    scattered_bytes: float
    transient_bytes: int


def unit_traffic(world: int = 2, param_dtype: str = "bfloat16", reduce_dtype: str = "float32",
                 config: ModelConfig | None = None) -> UnitTraffic:  # fmt: skip
    """One block of the measured model (``ModelConfig.gpt_small``) as an FSDP unit on ``world`` ranks."""
    config = ModelConfig.gpt_small() if config is None else config
    world = integer("world", world, minimum=2)
    choice("param_dtype", param_dtype, tuple(memory.DTYPE_BYTES))
    choice("reduce_dtype", reduce_dtype, tuple(memory.DTYPE_BYTES))
    block = config.parameter_count() - dataclasses.replace(config, layers=config.layers - 1).parameter_count()
    share = (world - 1) / world  # the ring: each rank moves all but its own shard
    return UnitTraffic(
        params=block,
        world=world,
        gathered_bytes=block * memory.DTYPE_BYTES[param_dtype] * share,
        scattered_bytes=block * memory.DTYPE_BYTES[reduce_dtype] * share,
        transient_bytes=block * memory.fsdp2_unit_transient_bytes_per_param(param_dtype, reduce_dtype),
    )


def fsdp_figure(units: int = 3, traffic: UnitTraffic | None = None) -> Figure:
    """One training step of ``units`` FSDP units: all-gathers, forward and backward computation and reduce-scatters
    on three lanes, each gather overlapping the previous unit's computation (durations not to scale)."""
    units = integer("units", units, minimum=1, maximum=6)
    t = unit_traffic() if traffic is None else traffic
    fig, ax = schematic(5.4, 2.9)
    lanes = {"all-gather": 1.9, "compute": 1.3, "reduce-scatter": 0.7}
    for name, y in lanes.items():
        ax.text(0.95, y + 0.2, name, ha="right", va="center", fontsize=8.5)
    w, x0 = 0.36, 1.05
    slots = []  # (lane, start slot, label, colour)
    for u in range(units):  # forward: gather u+1 while computing u
        slots.append(("all-gather", u, f"AG{u}", COLOURS[0]))
        slots.append(("compute", u + 1, f"F{u}", COLOURS[2]))
    start = units + 1
    for k, u in enumerate(reversed(range(units))):  # backward: gather again (resharded), compute, reduce-scatter
        slots.append(("all-gather", start + k, f"AG{u}", COLOURS[0]))
        slots.append(("compute", start + k + 1, f"B{u}", COLOURS[3]))
        slots.append(("reduce-scatter", start + k + 2, f"RS{u}", COLOURS[1]))
    for lane, slot, label, colour in slots:
        box(ax, x0 + slot * w, lanes[lane], w * 0.94, 0.4, label, colour, fontsize=7.5)
    end = x0 + (start + units + 2) * w
    ax.annotate("", xy=(end, 0.5), xytext=(x0, 0.5), arrowprops={"arrowstyle": "->", "color": "black"})
    ax.text(end + 0.05, 0.5, "time", va="center", fontsize=8)
    ax.text(x0 + units * w / 2 + w, 2.4, "forward", ha="center", fontsize=8.5, weight="bold")
    ax.text(x0 + (start + units / 2 + 0.5) * w, 2.4, "backward", ha="center", fontsize=8.5, weight="bold")
    ax.text(0.05, 2.85, f"One block of the measured model = one unit: {t.params / 1e6:.2f} M parameters on "
            f"{t.world} ranks,\nbf16 parameters, fp32 reduction (durations not to scale)",
            va="top", fontsize=8.5)  # fmt: skip
    ax.text(0.05, 0.3, f"each AG: {t.gathered_bytes / 1e6:.1f} MB into each rank; each RS: "
            f"{t.scattered_bytes / 1e6:.1f} MB out of each rank;\nheld while a unit is computed: "
            f"{t.transient_bytes / 1e6:.1f} MB", va="top", fontsize=8.5)  # fmt: skip
    return fig

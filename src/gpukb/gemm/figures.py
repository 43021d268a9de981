"""The GEMM chapter's schematic figures: how a product is cut into tiles, and the pipelined TMA loop.

Both are drawn from the bf16 configuration the Triton GEMM uses by default
(:data:`gpukb.gemm.triton.configs.DEFAULT_CONFIGS`) through data functions (:func:`tiling_counts`,
:func:`pipeline_schedule`) that tests check. :mod:`gpukb.gemm.pages` alone turns a figure into inline SVG.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure

from gpukb.arguments import given, positive_int, real
from gpukb.cuda import limits
from gpukb.figures import COLOURS, arrow, box, schematic
from gpukb.gemm.triton.configs import DEFAULT_CONFIGS, Config, shared_memory_model


@dataclass(frozen=True)
class TilingCounts:
    """The work of one tiling of an m×n×k product.

    Attributes:
        tiles_m: Tiles of C down M (the last may be partial).
        tiles_n: Tiles of C across N.
        k_steps: Steps of the K loop per tile.
        loaded_per_step: Elements of A and B one step loads, ``(BLOCK_M + BLOCK_N)·BLOCK_K``.
        flops_per_step: ``2·BLOCK_M·BLOCK_N·BLOCK_K``.
    """

    tiles_m: int
    tiles_n: int
    k_steps: int
    loaded_per_step: int
    flops_per_step: int

    @property
    def tiles(self) -> int:
        """Tiles of C: one program's work each."""
        return self.tiles_m * self.tiles_n

    @property
    def flop_per_element(self) -> float:
        """FLOP per element loaded into shared memory: the reuse the tile shape buys."""
        return self.flops_per_step / self.loaded_per_step


def tiling_counts(config: Config, m: int, n: int, k: int) -> TilingCounts:
    """Tiles, K steps and per-step work of ``config`` on an m×n×k product."""
    if not isinstance(config, Config):
        raise TypeError(f"config must be a gpukb.gemm.triton.configs.Config; got {given(config)}")
    m, n, k = (positive_int(name, v) for name, v in (("m", m), ("n", n), ("k", k)))
    bm, bn, bk = config.block_m, config.block_n, config.block_k
    return TilingCounts(-(-m // bm), -(-n // bn), -(-k // bk), (bm + bn) * bk, 2 * bm * bn * bk)


def tiling_figure(config: Config | None = None, size: int = 2048) -> Figure:
    """A, B and C of a size³ product with one tile of C, the strips of A and B it reads, and one K step."""
    config = DEFAULT_CONFIGS["bfloat16"] if config is None else config
    c = tiling_counts(config, size, size, size)
    fig, ax = schematic(6.4, 4.4)
    side = 2.0
    unit = side / size
    bm, bn, bk = config.block_m * unit, config.block_n * unit, config.block_k * unit
    ti, tj, step = 2, 3, 5  # the tile drawn, and the K step highlighted
    # B above C, A left of C
    bx, by = 3.9, 2.3
    ax_, ay = 0.6, 0.15
    cx, cy = bx, ay
    box(ax, bx, by, side, side, "", None)
    box(ax, bx + tj * bn, by, bn, side, "", COLOURS[1])
    box(ax, bx + tj * bn, by + side - (step + 1) * bk, bn, bk, "", COLOURS[3])
    box(ax, ax_, ay, side, side, "", None)
    box(ax, ax_, ay + side - (ti + 1) * bm, side, bm, "", COLOURS[0])
    box(ax, ax_ + step * bk, ay + side - (ti + 1) * bm, bk, bm, "", COLOURS[3])
    box(ax, cx, cy, side, side, "", None)
    for i in range(1, c.tiles_m):  # the tile grid of C, faint
        ax.plot([cx, cx + side], [cy + side - i * bm] * 2, color="black", lw=0.3, alpha=0.4)
    for j in range(1, c.tiles_n):
        ax.plot([cx + j * bn] * 2, [cy, cy + side], color="black", lw=0.3, alpha=0.4)
    box(ax, cx + tj * bn, cy + side - (ti + 1) * bm, bn, bm, "", COLOURS[2])
    ax.text(ax_ + side / 2, ay + side + 0.08, f"A: M × K = {size:,} × {size:,}", ha="center", fontsize=10)
    ax.text(bx + side / 2, by + side + 0.08, f"B: K × N = {size:,} × {size:,}", ha="center", fontsize=10)
    ax.text(cx + side / 2, cy - 0.12, f"C: {c.tiles_m} × {c.tiles_n} = {c.tiles:,} tiles", ha="center", va="top",
            fontsize=10)  # fmt: skip
    label = (cx + side / 2, cy + 0.55)
    arrow(ax, (label[0], label[1] + 0.25), (cx + (tj + 0.5) * bn, cy + side - (ti + 1) * bm - 0.02))
    ax.text(*label, f"one program computes\na {config.block_m} × {config.block_n} tile of C", ha="center",
            va="center", fontsize=9, bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})  # fmt: skip
    lines = [
        f"BLOCK_M × BLOCK_N × BLOCK_K = {config.block_m} × {config.block_n} × {config.block_k}",
        f"K loop: {c.k_steps} steps; each loads {c.loaded_per_step:,} elements",
        f"(A and B tiles in red) and does {c.flops_per_step:,} FLOP:",
        f"{c.flop_per_element:,.0f} FLOP per element loaded",
    ]
    ax.text(0.05, 4.3, "\n".join(lines), va="top", fontsize=9.5)
    return fig


@dataclass(frozen=True)
class PipelineStep:
    """One K step of the pipelined loop, in units of one tensor-core product.

    Attributes:
        step: The K step.
        buffer: The shared-memory stage it lands in, ``step mod num_stages``.
        load_start: When its TMA load is issued.
        landed: When its data is in shared memory.
        compute_start: When the tensor cores start on it (they take 1).
    """

    step: int
    buffer: int
    load_start: float
    landed: float
    compute_start: float


def pipeline_schedule(num_stages: int, steps: int, latency: float = 3.0) -> list[PipelineStep]:
    """When each K step's load and product run in a ``num_stages``-deep software pipeline.

    A load takes ``latency`` product-times to land, and one may be issued per unit of time; it can only be issued
    once its buffer is free (the product that used the buffer, ``num_stages`` steps back, has finished). A product
    starts once its data has landed and the previous product is done. With ``num_stages > latency`` the tensor
    cores never wait after the first load; with fewer stages they wait for every few loads.

    Raises:
        ValueError: For a stage count or step count below 1, or a latency that is not a number ≥ 0.
    """
    stages = positive_int("num_stages", num_stages)
    steps = positive_int("steps", steps)
    latency = real("latency", latency, minimum=0)
    out: list[PipelineStep] = []
    issue_free = compute_free = 0.0
    for s in range(steps):
        freed = out[s - stages].compute_start + 1 if s >= stages else 0.0
        load = max(issue_free, freed)
        compute = max(load + latency, compute_free)
        out.append(PipelineStep(s, s % stages, load, load + latency, compute))
        issue_free, compute_free = load + 1, compute + 1
    return out


def _pipeline_panel(ax, schedule: list[PipelineStep], stages: int, top: float, scale: float, x0: float) -> float:
    """Draw one schedule: a row per stage buffer (load in flight, then in use) and a row of products."""
    height = 0.26
    for b in range(stages):
        y = top - (b + 1) * (height + 0.04)
        ax.text(x0 - 0.08, y + height / 2, f"buffer {b}", ha="right", va="center", fontsize=8)
        for p in (p for p in schedule if p.buffer == b):
            colour = COLOURS[p.step % len(COLOURS)]
            box(ax, x0 + p.load_start * scale, y, (p.landed - p.load_start) * scale, height, f"load k{p.step}",
                None, fontsize=6.5)  # fmt: skip
            box(ax, x0 + p.compute_start * scale, y, scale, height, f"k{p.step}", colour, fontsize=6.5)
    y = top - (stages + 1) * (height + 0.04) - 0.06
    ax.text(x0 - 0.08, y + height / 2, "tensor cores", ha="right", va="center", fontsize=8)
    for p in schedule:
        box(ax, x0 + p.compute_start * scale, y, scale, height, f"k{p.step}", COLOURS[p.step % len(COLOURS)],
            fontsize=6.5)  # fmt: skip
    end = schedule[-1].compute_start + 1
    ax.text(x0 + end * scale + 0.05, y + height / 2, f"{end:g}", va="center", fontsize=8, weight="bold")
    return y


def pipeline_figure(config: Config | None = None, steps: int = 8, latency: float = 3.0) -> Figure:
    """The K loop of one tile with the configuration's stages and with two, each stage buffer's load in flight and
    its product, and the shared memory the stages take against the per-block limit."""
    config = DEFAULT_CONFIGS["bfloat16"] if config is None else config
    tiling_counts(config, 1, 1, 1)  # refuses what is not a configuration
    shared = shared_memory_model(config)
    limit = limits.capability("9.0").shared_per_block_optin
    per_stage = (config.block_m + config.block_n) * config.block_k * 2
    fig, ax = schematic(6.4, 4.6)
    scale, x0 = 0.3, 0.95
    ax.text(0.02, 4.55, f"K loop of one tile, {steps} steps; a load lands {latency:g} product-times after it is "
            "issued (illustrative)", va="top", fontsize=8.5)  # fmt: skip
    top = 4.25
    for stages in (config.num_stages, 2):
        ax.text(0.02, top, f"{stages} stages", va="top", fontsize=9, weight="bold")
        bottom = _pipeline_panel(ax, pipeline_schedule(stages, steps, latency), stages, top - 0.05, scale, x0)
        top = bottom - 0.25
    ax.text(0.02, top + 0.05, f"Each stage holds an A and a B tile ({config.block_m} + {config.block_n}) × "
            f"{config.block_k} × 2 B = {per_stage // 1024} KiB; {config.num_stages} stages and the C tile for the "
            f"store take\n{shared / 1024:.0f} KiB of the {limit / 1024:.0f} KiB a block may use on sm_90 "
            f"(bold: the time the loop ends).", va="top", fontsize=8)  # fmt: skip
    return fig

"""The collectives page (docs/distributed/collectives.md): ring traffic, bus factors and the measured
bandwidth of NCCL's collectives against the links.
"""

from __future__ import annotations

from gpukb import records
from gpukb.distributed import collectives
from gpukb.distributed import figures as distributed_figures
from gpukb.distributed.pages import H100_NVLINKS, nvlinks
from gpukb.distributed.results import CollectiveBandwidth
from gpukb.figures import to_svg
from gpukb.tables import bytes_text, markdown_table


def ring_traffic_markdown(size_bytes: int = 1 << 20, ranks: tuple[int, ...] = (2, 4, 8, 16)) -> str:
    """Bytes each rank sends in the simulated ring all-reduce, against 2(p − 1)/p · S."""
    headers, rows = collectives.ring_traffic_table(size_bytes, list(ranks))
    return markdown_table(headers, rows)


def bus_factors_markdown(ranks: tuple[int, ...] = (2, 4, 8)) -> str:
    """nccl-tests' bus-bandwidth factor of each collective for a few rank counts."""
    rows = [[f"`{op}`", *(f"{collectives.bus_factor(op, n):.4g}" for n in ranks)] for op in collectives.BUS_FACTORS]
    return markdown_table(["collective", *(f"n = {n}" for n in ranks)], rows)


H100_NVLINK_LINE_GBPS = 450


NCCL_H100_NVLINK_GBPS = 370


_OP_NAMES = {"all_reduce": "all-reduce", "reduce_scatter": "reduce-scatter", "all_gather": "all-gather"}


def _powers_of(factor: int, sizes: list[int]) -> list[int]:
    """The sizes that are the smallest times a power of ``factor``."""
    shown = []
    for s in sizes:
        q, r = divmod(s, sizes[0])
        while r == 0 and q % factor == 0:
            q //= factor
        if r == 0 and q == 1:
            shown.append(s)
    return shown


def collective_bandwidth_markdown(record_id: str, factor: int = 4) -> str:
    """Time, algbw and busbw (nccl-tests' definitions, GB/s = 10⁹ bytes/s) of each recorded collective at the sizes
    that are the smallest times a power of ``factor``."""
    record = records.load(record_id, CollectiveBandwidth)
    ops = list(dict.fromkeys(r.op for r in record.rows))
    by = {(r.op, r.size_bytes): r for r in record.rows}
    sizes = sorted({r.size_bytes for r in record.rows})
    rows = []
    for s in _powers_of(factor, sizes):
        row = [bytes_text(s)]
        for op in ops:
            r = by[op, s]
            row += [f"{r.ms.median * 1e3:.1f}", f"{r.algbw / 1e9:.2f}", f"{r.busbw / 1e9:.2f}"]
        rows.append(row)
    headers = ["size S"]
    for op in ops:
        headers += [f"{_OP_NAMES[op]} µs", f"{_OP_NAMES[op]} algbw (GB/s)", f"{_OP_NAMES[op]} busbw (GB/s)"]
    windows = "" if record.repeats == 1 else f", in each of {record.repeats} windows: the median window"
    how = (
        f"{record.dtype}, {record.world_size} ranks, {record.backend.upper()}; {record.warmup} warm-up calls, then "
        f"the mean of {record.iters} calls of the slowest rank{windows}. Measured at {len(sizes)} sizes from "
        f"{bytes_text(sizes[0])} to {bytes_text(sizes[-1])}; shown: each size {factor} times the one before. "
    )
    return records.measured_table(headers, rows, record.run, how)


def alpha_beta_markdown(record_id: str) -> str:
    """The α-β model fitted to each recorded collective: α, B, the size S½ below which α is more than half the
    time, and the model's worst relative error (with the size it occurs at). The smallest size is left out of the
    fit and of the errors: the run's very first call (an all-reduce of it) still carried first-call costs."""
    record = records.load(record_id, CollectiveBandwidth)
    rows = []
    for op in dict.fromkeys(r.op for r in record.rows):
        measured = sorted((r for r in record.rows if r.op == op), key=lambda r: r.size_bytes)[1:]
        factor = collectives.bus_factor(op, record.world_size)
        seconds = [r.ms.median / 1e3 for r in measured]  # the median window, per call
        alpha, bandwidth = collectives.fit_alpha_beta([r.size_bytes for r in measured], seconds, factor)
        errors = [(collectives.alpha_beta_time(r.size_bytes, alpha, bandwidth, factor) / s - 1, r.size_bytes)
                  for r, s in zip(measured, seconds, strict=True)]  # fmt: skip
        worst, at = max(errors, key=lambda e: abs(e[0]))
        rows.append([_OP_NAMES[op], f"{alpha * 1e6:.1f}", f"{bandwidth / 1e9:.0f}",
                     f"{alpha * bandwidth / factor / 2**20:.1f}", f"{worst:+.0%} at {bytes_text(at)}"])  # fmt: skip
    headers = ["collective", "α (µs)", "B (GB/s)", "S½ (MiB)", "worst error of the model"]
    first = min(r.size_bytes for r in record.rows)
    sizes = sorted({r.size_bytes for r in record.rows})
    return (
        markdown_table(headers, rows)
        + f"\n\nFitted to the {len(sizes) - 1} sizes from {bytes_text(sizes[1])} to {bytes_text(sizes[-1])} of each "
        f"collective ({bytes_text(first)} left out: the run's first call, an all-reduce of that size, was slower than "
        "the calls after it).\n"
    )


def link_comparison_markdown(record_id: str) -> str:
    """Each collective's busbw at the largest size against H100's NVLink line rate per direction and NCCL's
    effective NVLink bandwidth on H100."""
    record = records.load(record_id, CollectiveBandwidth)
    links = nvlinks(record)
    if links != H100_NVLINKS:
        raise ValueError(
            f"{record_id} shows {links or 'no'} NVLinks between its GPUs; the rates compared with are H100's "
            f"({H100_NVLINKS} links)"
        )
    line = H100_NVLINK_LINE_GBPS
    largest = max(r.size_bytes for r in record.rows)
    rows = []
    for r in record.rows:
        if r.size_bytes == largest:
            busbw = r.busbw / 1e9
            rows.append(
                [
                    _OP_NAMES[r.op],
                    bytes_text(r.size_bytes),
                    f"{busbw:.1f}",
                    f"{100 * busbw / line:.0f}%",
                    f"{100 * busbw / NCCL_H100_NVLINK_GBPS:.0f}%",
                ]
            )
    headers = [
        "collective",
        "size S",
        "busbw (GB/s)",
        f"of the line rate, {line} GB/s",
        f"of NCCL's ~{NCCL_H100_NVLINK_GBPS} GB/s",
    ]
    return markdown_table(headers, rows)


def collective_figure(record_id: str) -> str:
    """busbw against size for each recorded collective (inline SVG), with the links' rate per direction and NCCL's
    effective NVLink bandwidth as horizontal lines."""
    from gpukb.figures import new_figure, to_svg

    record = records.load(record_id, CollectiveBandwidth)
    fig, ax = new_figure(7.0, 3.8)
    for op in dict.fromkeys(r.op for r in record.rows):
        rows = sorted((r for r in record.rows if r.op == op), key=lambda r: r.size_bytes)
        ax.plot([r.size_bytes for r in rows], [r.busbw / 1e9 for r in rows], marker=".", label=_OP_NAMES[op])
    if nvlinks(record) == H100_NVLINKS:
        line = H100_NVLINK_LINE_GBPS
        ax.axhline(line, color="black", linestyle="--", linewidth=1, label=f"NVLink line rate, one way ({line})")
    ax.axhline(
        NCCL_H100_NVLINK_GBPS, color="grey", linestyle=":", linewidth=1, label=f"NCCL's ~{NCCL_H100_NVLINK_GBPS}"
    )
    ax.set_xscale("log", base=2)
    ticks = _powers_of(16, sorted({r.size_bytes for r in record.rows}))
    ax.set_xticks(ticks, [bytes_text(t) for t in ticks])
    ax.set_xlabel("size S")
    ax.set_ylabel("busbw (GB/s)")
    ax.legend(loc="center left")
    return to_svg(fig)


def ring_figure() -> str:
    """Inline SVG: the simulated ring all-reduce on four ranks, step by step."""
    return to_svg(distributed_figures.ring_figure())

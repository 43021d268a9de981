"""The datasheets page (docs/performance/datasheets.md): the GPUs' datasheet figures, their sources, and the
chapter's worked problems.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpukb.performance import specs
from gpukb.performance.ceilings import quoted_ceilings, sweep
from gpukb.performance.pages import STATUS_MARK, Sweep, _num
from gpukb.performance.problems import problems as chapter_problems
from gpukb.performance.results import GEMM_DTYPES, H100_SWEEP
from gpukb.problems import markdown as problems_markdown
from gpukb.tables import markdown_table as table

#: The GPUs the datasheet page compares.
DATASHEET_GPUS = ("v100-sxm2", "a100-sxm4-40gb", "h100-sxm5", "h200-sxm", "b200-hgx", "mi300x")


def spec_table(record: Sweep = H100_SWEEP, gpu_ids: Sequence[str] = DATASHEET_GPUS) -> str:
    """Datasheet figures of several GPUs, with the measured values of a run's GPU next to them."""
    measured = quoted_ceilings(record)
    record = sweep(record)
    sheet = specs.load()
    gpus = [sheet.gpu(g) for g in gpu_ids]
    gpu = record.run.gpu
    measured_of = {
        "sm_count": f"{gpu.sm_count}",
        "memory": f"{gpu.memory_bytes / 2**30:.1f} GiB",
        "l2_cache": f"{gpu.l2_bytes / 2**20:g} MiB",
        "memory_bandwidth": _num(measured.get("bandwidth"), 0),
        **{specs.GEMM_QUANTITY[d]: _num(measured.get(d)) for d in GEMM_DTYPES if d in measured},
    }
    rows = []
    for quantity, (unit, label) in specs.QUANTITIES.items():
        figures = [g.figure(quantity) for g in gpus]
        if all(f is None for f in figures):
            continue
        cells = ["–" if f is None else f"{f.dense:,g}{STATUS_MARK[f.status]}" for f in figures]
        rows.append((f"{label}{f' ({unit})' if unit else ''}", *cells, measured_of.get(quantity, "–")))
    headers = ["figure", *[g.name for g in gpus], f"measured on this {gpu.name}"]
    return table(headers, rows)


def spec_sources(gpu_ids: Sequence[str] = DATASHEET_GPUS) -> str:
    """Sources of the datasheet figures, the date checked, and where figures were read when not in the source."""
    sheet = specs.load()
    used = {f.source for g in gpu_ids for f in sheet.gpu(g).figures.values()}
    lines = [f"Checked {sheet.checked}. Sources:", ""]
    lines += [f"- [{s.title}]({s.url})" for sid, s in sorted(sheet.sources.items()) if sid in used]
    lines += ["", "Where the figures were read:", ""]
    lines += [f"- **{sheet.gpu(g).name}**: {sheet.gpu(g).evidence}" for g in gpu_ids]
    return "\n".join(lines)


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.performance.problems`)."""
    return problems_markdown(chapter_problems())

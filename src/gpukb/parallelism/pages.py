"""Markdown for the parallelism pages; the only module of the chapter that returns page text.

Tables come from the chapter's formulas (:mod:`~gpukb.parallelism.communication`, :mod:`~gpukb.parallelism.memory`,
:mod:`~gpukb.parallelism.pipeline`), from its sources file (:mod:`~gpukb.parallelism.sources`) and from the
committed four-GPU record (:data:`gpukb.parallelism.results.SCHEMES_ID`); figures from
:mod:`~gpukb.parallelism.figures`.
"""

from __future__ import annotations

import re
from fractions import Fraction

from gpukb import records
from gpukb.figures import to_svg
from gpukb.parallelism import communication as comm
from gpukb.parallelism import figures
from gpukb.parallelism.memory import activation_bytes_per_layer, state_bytes_per_gpu
from gpukb.parallelism.pipeline import bubble_fraction, in_flight, interleaved_bubble_fraction
from gpukb.parallelism.problems import problems as chapter_problems
from gpukb.parallelism.results import SCHEMES_ID, ParallelismSchemes
from gpukb.parallelism.sources import sources
from gpukb.problems import markdown as problems_markdown
from gpukb.tables import bytes_text, markdown_table

MIB = 2**20
GIB = 2**30

#: The example of the comparison table: a stack of 32 blocks of width 4096 (32 heads), sequences of 4096 tokens,
#: 32 sequences per step over 8 GPUs, bfloat16 activations, mixed-precision Adam (16 bytes per parameter).
EXAMPLE = {"layers": 32, "hidden": 4096, "heads": 32, "seq": 4096, "batch": 32, "gpus": 8}


def _gib(n: float) -> str:
    return f"{float(n) / GIB:.2f} GiB"


def _counts(traffic: list[comm.Traffic]) -> str:
    return ", ".join(f"{n} {kind.replace('_', '-')}" for kind, n in comm.collective_counts(traffic).items())


def _example_parameters() -> tuple[int, int]:
    h, n = EXAMPLE["hidden"], EXAMPLE["layers"]
    return 12 * h * h * n, 4 * h * n  # the split matrices, the LayerNorms


def comparison_rows() -> list[tuple[str, str, list[comm.Traffic], Fraction, str]]:
    """The comparison table's rows: name, what is split, one GPU's collectives per step, its model-state bytes,
    when to reach for it (for :data:`EXAMPLE`)."""
    n, h, s, b, g = (EXAMPLE[k] for k in ("layers", "hidden", "seq", "batch", "gpus"))
    split, repl = _example_parameters()
    p = split + repl
    moe_tokens = b * s // g
    return [
        (
            "FSDP (8)",
            "parameters, gradients, optimizer state",
            comm.fsdp(p, g),
            state_bytes_per_gpu(p, dp=g, scheme="zero3"),
            "the model state does not fit one GPU but a layer's activations do; any interconnect, as gathers overlap "
            "compute",
        ),
        (
            "TP (8)",
            "each layer's matrices: heads and MLP columns",
            comm.tensor_parallel(b, s, h, g, 2, n),
            state_bytes_per_gpu(split, tp=g) + 16 * repl,
            "a layer is too large or too slow for one GPU; inside one NVLink domain: two all-reduces per layer sit on "
            "the critical path",
        ),
        (
            "TP + SP (8)",
            "matrices, and LayerNorm/dropout activations by sequence",
            comm.tensor_parallel(b, s, h, g, 2, n, sequence=True),
            state_bytes_per_gpu(split, tp=g) + 16 * repl,
            "always with TP: the same bytes, activations divided by t",
        ),
        (
            "CP (8)",
            "the sequence; K and V travel the ring",
            [*comm.context_parallel(b, s, h, g, 2, n), comm.Traffic("gradients", "all_reduce", 1, 2 * p, g)],
            state_bytes_per_gpu(p),
            "sequences whose activations do not fit, even with TP + SP",
        ),
        (
            "PP (8), 1F1B, 32 micro-batches",
            "layers, in stages",
            comm.pipeline_parallel(1, s, h, g, b, 1),
            state_bytes_per_gpu(p, pp=g),
            f"across nodes or slow links: only activations cross stage boundaries; keeps a bubble of "
            f"{float(bubble_fraction(g, b)):.0%} at 32 micro-batches",
        ),
        (
            "EP (8), 64 experts, top-2 (per MoE layer)",
            "the experts of a mixture-of-experts layer",
            comm.expert_parallel(moe_tokens, h, g, 2, 64),
            Fraction(0),
            "mixture-of-experts models: each GPU holds 1/8 of the experts; the all-to-alls grow with tokens × k",
        ),
        (
            "FSDP (4) + TP (2)",
            "TP inside a pair, FSDP across the pairs",
            comm.fsdp_tp(split, repl, b // 4, s, h, 4, 2, 2, n),
            Fraction(16 * (split // 2 + repl), 4),
            "the usual 2-D mesh: TP where the links are fastest, FSDP beyond",
        ),
    ]


def comparison_markdown() -> str:
    """Which scheme to reach for, when: for :data:`EXAMPLE`, what each splits, its collectives per step, the bytes
    each GPU sends per step and the model state each holds."""
    rows = []
    for name, splits, traffic, state, when in comparison_rows():
        rows.append([name, splits, _counts(traffic), _gib(comm.sent_bytes(traffic)),
                     _gib(state) if state else "experts / 8", when])  # fmt: skip
    return markdown_table(
        [
            "scheme",
            "splits",
            "collectives per step",
            "sent per GPU per step",
            "model state per GPU",
            "reach for it when",
        ],
        rows,
    )


def tp_traffic_markdown(batch: int = 1, seq: int = 2048, hidden: int = 12288, tp: int = 8) -> str:
    """One block's collectives per training step under tensor and under tensor + sequence parallelism."""
    rows = []
    for label, sequence in (("TP", False), ("TP + SP", True)):
        for t in comm.tensor_parallel(batch, seq, hidden, tp, 2, 1, sequence=sequence):
            rows.append(
                [label, t.what, t.kind.replace("_", "-"), t.count, bytes_text(t.whole_bytes), bytes_text(t.sent_bytes)]
            )
    return markdown_table(["scheme", "what moves", "collective", "per step", "size of each", "sent per GPU"], rows)


def activation_markdown(seq: int = 2048, batch: int = 1, hidden: int = 12288, heads: int = 96, tp: int = 8) -> str:
    """Activation bytes one layer keeps per GPU (Korthikanti et al. 2022, table 2) for each choice."""
    choices = [("none", 1, False, "none"), ("TP", tp, False, "none"), ("TP + SP", tp, True, "none"),
               ("TP", tp, False, "selective"), ("TP + SP", tp, True, "selective"),
               ("TP", tp, False, "full")]  # fmt: skip
    rows = [
        [label, t, recompute, bytes_text(activation_bytes_per_layer(seq, batch, hidden, heads, t, sequence, recompute))]
        for label, t, sequence, recompute in choices
    ]
    return markdown_table(["parallelism", "t", "recomputation", "activations per layer per GPU"], rows)


def bubble_markdown(stages: tuple[int, ...] = (2, 4, 8), micro_batches: tuple[int, ...] = (4, 8, 16, 32)) -> str:
    """The bubble (p − 1)/(m + p − 1) of GPipe and 1F1B, and the interleaved schedule's with 2 chunks per stage."""
    rows = []
    for p in stages:
        for m in micro_batches:
            bubble, interleaved = bubble_fraction(p, m), interleaved_bubble_fraction(p, m, 2)
            rows.append([p, m, f"{float(bubble):.1%}", f"{float(interleaved):.1%}", in_flight("GPipe", p, m),
                         in_flight("1F1B", p, m)])  # fmt: skip
    return markdown_table(
        ["stages p", "micro-batches m", "bubble", "interleaved, v = 2", "held by stage 0: GPipe", "1F1B"], rows
    )


def cp_traffic_markdown(batch: int = 1, seq: int = 131072, hidden: int = 4096, kv_hidden: int = 1024) -> str:
    """One attention layer's ring traffic per GPU per step for a long sequence, by ring size."""
    rows = []
    for cp in (2, 4, 8):
        ref = comm.context_parallel(batch, seq, hidden, cp, 2, 1, kv_hidden)
        torch_cp = comm.context_parallel(batch, seq, hidden, cp, 2, 1, kv_hidden, implementation="pytorch")
        rows.append([cp, bytes_text(2 * batch * seq // cp * kv_hidden * 2), bytes_text(comm.sent_bytes(ref)),
                     bytes_text(comm.sent_bytes(torch_cp))])  # fmt: skip
    return markdown_table(["ring size", "K and V shard", "sent: reference", "sent: PyTorch, all-to-all rotation"], rows)


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.parallelism.problems`)."""
    return problems_markdown(chapter_problems())


def sources_markdown() -> str:
    """Every primary source of the chapter."""
    rows = [[f"[{s.title}]({s.url})", s.authors, s.version, s.supports, s.checked] for s in sources()]
    return markdown_table(["source", "authors", "version", "what the chapter takes from it", "checked"], rows)


# figures
def tensor_parallel_svg(tp: int = 2, sequence: bool = False) -> str:
    """The MLP split over ``tp`` ranks (:func:`gpukb.parallelism.figures.tensor_parallel_figure`), as SVG."""
    return to_svg(figures.tensor_parallel_figure(tp, sequence))


def ring_svg(cp: int = 4) -> str:
    """Which block pair each rank computes at each ring step, as SVG."""
    return to_svg(figures.ring_figure(cp))


def pipeline_svg(stages: int = 4, micro_batches: int = 8) -> str:
    """GPipe and 1F1B timelines, as SVG."""
    return to_svg(figures.pipeline_figure(stages, micro_batches))


def mesh_svg(dp: int = 2, tp: int = 2) -> str:
    """A 2-D device mesh, as SVG."""
    return to_svg(figures.mesh_figure(dp, tp))


def router_load(tokens: int = 4096, hidden: int = 64, experts: int = 8, top_k: int = 2, seed: int = 0) -> list[int]:
    """Rows a freshly initialized router (:func:`gpukb.parallelism.experts.moe`) sends to each expert, for
    ``tokens`` random tokens."""
    import torch

    from gpukb.parallelism.experts import load, moe

    layer = moe(hidden, experts, top_k, seed=seed)
    x = torch.randn(tokens, hidden, generator=torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        return load(layer.route(x)[1], experts)


def experts_svg() -> str:
    """The router's load per expert (:func:`router_load`), as SVG."""
    return to_svg(figures.experts_figure(router_load()))


def experts_load_markdown() -> str:
    """The router's load per expert and its imbalance."""
    from gpukb.parallelism.experts import imbalance

    load = router_load()
    rows = [[f"expert {e}", n] for e, n in enumerate(load)]
    rows.append(["busiest / mean", f"{imbalance(load):.3f}"])
    return markdown_table(["expert", "rows routed (4096 tokens, top-2)"], rows)


# the four-GPU record
def _record() -> ParallelismSchemes | None:
    return records.load(SCHEMES_ID, ParallelismSchemes) if SCHEMES_ID in records.record_ids() else None


def measured_on_markdown() -> str:
    """Where the record was measured, or that the measurement is pending."""
    record = _record()
    if record is None:
        return '!!! note "Measurement pending"\n    No four-GPU record has been committed yet.'
    return records.measured_on(record.run, notes=True)


def topology_markdown() -> str:
    """``nvidia-smi topo -m`` of the record's machine, as a table (GPU rows only)."""
    record = _record()
    if record is None:
        return "Topology: pending."
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in record.topology.splitlines()]
    header = [c.strip() for c in lines[0].split("\t") if c.strip()]
    rows = [[c.strip() for c in line.split("\t")][: len(header) + 1] for line in lines[1:] if line.startswith("GPU")]
    return markdown_table(["", *header], [r + [""] * (len(header) + 1 - len(r)) for r in rows])


def measured_markdown() -> str:
    """Each scheme's step time, throughput, memory against the prediction and traffic against the formula."""
    record = _record()
    if record is None:
        return "Pending: no record."
    rows = []
    for r in record.rows:
        if r.step_ms is None:
            rows.append([r.name, r.gpus, "failed: " + str(r.extra.get("error", "no time"))[:120], "", "", "", ""])
            continue
        tokens = r.tokens_per_step / (r.step_ms.median / 1e3)
        state = ", ".join(f"{m / MIB:.0f}" for m in r.state_bytes)
        predicted = ", ".join(sorted({f"{m / MIB:.0f}" for m in r.predicted_state_bytes}))
        rows.append([r.name, r.gpus, f"{r.step_ms.median:.1f} ({r.step_ms.spread:.0%})", f"{tokens:,.0f}",
                     f"{state} / {predicted}", f"{r.sent_bytes / MIB:.1f} / {r.formula_bytes / MIB:.1f}",
                     ", ".join(f"{n} {k}" for k, n in r.collectives.items()) or "none"])  # fmt: skip
    return markdown_table(
        ["scheme", "GPUs", "ms per step (IQR/median)", "tokens/s", "state MiB per rank: measured / predicted",
         "MiB sent by rank 0: measured / formula", "collectives of rank 0"],
        rows,
    )  # fmt: skip


def context_parallel_check_markdown() -> str:
    """How far the context-parallel output, gathered back into sequence order, was from the same model on one GPU,
    and which collectives rank 0's log saw against the formula's."""
    record = _record()
    row = None if record is None else next((r for r in record.rows if r.name.startswith("CP")), None)
    if row is None or "max_abs_error" not in row.extra:
        return "Pending: no context-parallel output check recorded."
    error, largest = row.extra["max_abs_error"], row.extra["max_abs_output"]
    seen = ", ".join(f"{n} {k}" for k, n in row.collectives.items()) or "none"
    formula = ", ".join(f"{n} {k}" for k, n in row.formula_collectives.items())
    return (
        f"Largest difference from the one-GPU output: {error:g} where the largest output was {largest:g} "
        f"({error / largest:.1%} of it; bfloat16 keeps 8 significant bits, a step of {2**-7:.1%} to "
        f"{2**-8:.1%} of a value). Collectives rank 0's log saw: {seen}; the formula's: {formula}."
    )


def pipeline_measured_markdown() -> str:
    """The pipelines' step, one stage's micro-batch alone, and the bubble measured against (p − 1)/(m + p − 1)."""
    record = _record()
    if record is None:
        return "Pending: no record."
    rows = []
    for r in record.rows:
        if r.name.startswith("PP") and r.step_ms is not None:
            rows.append([r.name, f"{r.step_ms.median:.2f}", f"{r.extra['stage_ms']:.3f}",
                         f"{record.sizes['micro_batches']}", f"{r.extra['measured_bubble']:.1%}",
                         f"{r.extra['predicted_bubble']:.1%}"])  # fmt: skip
    return markdown_table(
        ["schedule", "ms per step", "ms per micro-batch, one stage alone", "micro-batches", "bubble measured",
         "predicted"],
        rows,
    )  # fmt: skip

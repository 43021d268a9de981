"""The page “Parallelism beyond FSDP” (docs/parallelism/index.md): its tables, figures and text."""

from __future__ import annotations

from fractions import Fraction

from gpukb.parallelism import communication as comm
from gpukb.parallelism.memory import state_bytes_per_gpu
from gpukb.parallelism.pipeline import bubble_fraction
from gpukb.parallelism.problems import problems as chapter_problems
from gpukb.problems import markdown as problems_markdown
from gpukb.tables import markdown_table

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


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.parallelism.problems`)."""
    return problems_markdown(chapter_problems())

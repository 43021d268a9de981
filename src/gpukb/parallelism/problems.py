"""Worked problems of the parallelism chapter, every answer computed by the library (see :mod:`gpukb.problems`).

Traffic comes from :mod:`gpukb.parallelism.communication`, memory from :mod:`gpukb.parallelism.memory` and the
bubble from :mod:`gpukb.parallelism.pipeline`; the shapes are GPT-3 175B's (Brown et al., 2020, table 2.1), the
running example of the Megatron-LM papers.
"""

from __future__ import annotations

from gpukb.parallelism import communication as comm
from gpukb.parallelism.memory import activation_bytes_per_layer, state_bytes_per_gpu
from gpukb.parallelism.pipeline import bubble_fraction, interleaved_bubble_fraction
from gpukb.problems import Problem
from gpukb.tables import bytes_text

#: GPT-3 175B: hidden size, attention heads, sequence length (Brown et al., 2020, table 2.1).
HIDDEN, HEADS, SEQ = 12288, 96, 2048
GPT3 = ("Brown et al., Language Models are Few-Shot Learners (2020), table 2.1", "https://arxiv.org/abs/2005.14165")
MEGATRON_TP = ("Shoeybi et al., Megatron-LM (2019), section 3", "https://arxiv.org/abs/1909.08053")
MEGATRON_SP = (
    "Korthikanti et al., Reducing Activation Recomputation in Large Transformer Models (2022), table 2",
    "https://arxiv.org/abs/2205.05198",
)


def tensor_parallel_traffic() -> Problem:
    tp = comm.tensor_parallel(1, SEQ, HIDDEN, 4)
    seq = comm.tensor_parallel(1, SEQ, HIDDEN, 4, sequence=True)
    per_call = comm.sent_bytes(tp) // tp[0].count
    counts = comm.collective_counts(seq)
    return Problem(
        id="tp-all-reduces",
        title="All-reduces per block under tensor parallelism",
        question=f"A transformer block of GPT-3's width (h = {HIDDEN}) runs with TP = 4 on one sequence of {SEQ} "
        "tokens in bf16. How many all-reduces does one training step make, of how many bytes each, and what does "
        "each GPU send?",
        answer=f"{comm.tp_all_reduces_per_block()['step']} all-reduces (2 forward, 2 backward) of "
        f"{bytes_text(tp[0].whole_bytes)} each; every GPU sends {bytes_text(per_call)} per all-reduce, "
        f"{bytes_text(comm.sent_bytes(tp))} per block and step.",
        working=(
            "Megatron's MLP and attention each split one matrix by columns and the next by rows: one all-reduce of "
            "the block's output in the forward pass and one of its input's gradient in the backward pass, each.",
            f"Each all-reduce carries b·s·h·2 = 1 × {SEQ} × {HIDDEN} × 2 = {tp[0].whole_bytes:,} bytes.",
            f"A ring all-reduce on 4 GPUs sends 2·(4 − 1)/4 of it from every GPU: {per_call:,} bytes.",
            "With sequence parallelism the same bytes move as "
            + ", ".join(f"{n} {kind.replace('_', '-')}" for kind, n in counts.items())
            + " (each all-gather and reduce-scatter is half of an all-reduce).",
        ),
        sources=(MEGATRON_TP, MEGATRON_SP),
    )


def pipeline_bubble() -> Problem:
    p, m = 4, 8
    plain, interleaved = bubble_fraction(p, m), interleaved_bubble_fraction(p, m, 2)
    return Problem(
        id="bubble",
        title="The bubble of a pipeline",
        question=f"A model is split into p = {p} pipeline stages and each batch into m = {m} micro-batches. What "
        "fraction of each GPU's time is idle under GPipe and 1F1B, and with 2 interleaved chunks per stage?",
        answer=f"{plain} = {float(plain):.1%} under GPipe and 1F1B; {interleaved} = {float(interleaved):.1%} "
        "interleaved.",
        working=(
            f"Each stage waits p − 1 = {p - 1} micro-batch slots to start and {p - 1} to drain, out of "
            f"m + p − 1 = {m + p - 1}: (p − 1)/(m + p − 1) = {plain}.",
            "1F1B changes the order (and the activations held), not the idle slots.",
            f"With v = 2 chunks per stage a slot is v times shorter: (p − 1)/(v·m + p − 1) = {interleaved}.",
        ),
        sources=(
            ("Huang et al., GPipe (2019)", "https://arxiv.org/abs/1811.06965"),
            (
                "Narayanan et al., Efficient Large-Scale Language Model Training (2021), section 2.2",
                "https://arxiv.org/abs/2104.04473",
            ),
        ),
    )


def sequence_parallel_activations() -> Problem:
    t = 8
    tp_only = activation_bytes_per_layer(SEQ, 1, HIDDEN, HEADS, t)
    with_sp = activation_bytes_per_layer(SEQ, 1, HIDDEN, HEADS, t, sequence=True)
    return Problem(
        id="sequence-parallel-activations",
        title="What sequence parallelism saves",
        question=f"How much activation memory does one GPT-3 layer (s = {SEQ}, b = 1, h = {HIDDEN}, {HEADS} heads) "
        f"keep per GPU for the backward pass at TP = {t}, with and without sequence parallelism (no recomputation)?",
        answer=f"{bytes_text(tp_only)} with tensor parallelism alone, {bytes_text(with_sp)} with sequence parallelism "
        "as well.",
        working=(
            "Korthikanti et al.'s count per layer: s·b·h·(10 + 24/t + 5·a·s/(h·t)) bytes with tensor parallelism "
            "alone (the LayerNorms, dropouts and residual inputs are not split).",
            "Sequence parallelism splits those along the sequence too: s·b·h/t·(34 + 5·a·s/h).",
            f"At t = {t}: {float(tp_only):,.0f} bytes against {float(with_sp):,.0f} bytes.",
        ),
        sources=(MEGATRON_SP, GPT3),
    )


def model_state() -> Problem:
    params = 175 * 10**9
    state = state_bytes_per_gpu(params, tp=8, pp=8)
    return Problem(
        id="model-state",
        title="Model state per GPU under TP and PP",
        question="175 billion parameters are trained with mixed-precision Adam under TP = 8 and PP = 8, with no "
        "sharding across data-parallel replicas. How many bytes of parameters, gradients and optimizer state does "
        "each GPU hold?",
        answer=f"{float(state) / 10**9:.2f} GB per GPU.",
        working=(
            "Mixed-precision Adam keeps 16 bytes per parameter: 2 (bf16 weight) + 2 (gradient) + 4 + 4 + 4 (fp32 "
            "master weight and two moments).",
            f"TP × PP = 64 GPUs share the parameters: 16 × {params:.3g} / 64 = {float(state):.4g} bytes.",
        ),
        sources=(("Rajbhandari et al., ZeRO (2020), section 3.1", "https://arxiv.org/abs/1910.02054"),),
    )


def expert_traffic() -> Problem:
    ep = comm.expert_parallel(4096, 4096, 8, 2, 64)
    return Problem(
        id="moe-all-to-all",
        title="The all-to-all of a mixture-of-experts layer",
        question="A mixture-of-experts layer routes 4096 tokens per GPU (h = 4096, bf16) to the top 2 of 64 experts "
        "spread over 8 GPUs, evenly. How many bytes does each GPU send per layer and training step?",
        answer=f"{bytes_text(comm.sent_bytes(ep))} per GPU.",
        working=(
            "Each token goes to 2 experts; with even routing 7/8 of those copies live on other GPUs.",
            "The forward pass dispatches and combines (two all-to-alls), the backward pass the same for the "
            "gradients: 4 × 4096 × 2 × 7/8 rows of 4096 × 2 bytes, plus the routing indices.",
            f"In all: {comm.sent_bytes(ep):,} bytes.",
        ),
        sources=(("Lepikhin et al., GShard (2021)", "https://arxiv.org/abs/2006.16668"),),
    )


def ring_attention_traffic() -> Problem:
    cp = comm.context_parallel(1, 131072, 4096, 8, 2, 1, 1024)
    return Problem(
        id="ring-attention",
        title="The traffic of ring attention",
        question="A 131,072-token sequence is split over 8 GPUs by context parallelism, with keys and values "
        "1024 wide (grouped-query attention) in bf16. How many bytes does each GPU send per attention layer and "
        "training step?",
        answer=f"{bytes_text(comm.sent_bytes(cp))} per GPU, on the reference ring.",
        working=(
            "Each GPU holds 131072/8 tokens of K and V: 2 × 16384 × 1024 × 2 bytes.",
            "The forward pass passes that shard around the ring 8 − 1 times; the backward pass passes K and V again "
            "and their gradients back: 2 × 7 shards in all.",
            f"In all: {comm.sent_bytes(cp):,} bytes.",
        ),
        sources=(("Liu, Zaharia and Abbeel, Ring Attention (2023)", "https://arxiv.org/abs/2310.01889"),),
    )


def problems() -> list[Problem]:
    """The chapter's worked problems, computed now."""
    return [
        tensor_parallel_traffic(),
        sequence_parallel_activations(),
        pipeline_bubble(),
        model_state(),
        expert_traffic(),
        ring_attention_traffic(),
    ]

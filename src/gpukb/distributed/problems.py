"""Worked problems of the distributed chapter, every answer computed by the library (see :mod:`gpukb.problems`)."""

from __future__ import annotations

import numpy as np

from gpukb import records
from gpukb.distributed import collectives, memory
from gpukb.distributed.results import CollectiveBandwidth
from gpukb.problems import Problem

#: The committed NCCL collectives run on two H100s joined by NVLink.
COLLECTIVES_H100X2 = "distributed/collectives-h100x2"

ZERO = ("Rajbhandari et al., ZeRO: Memory Optimizations Toward Training Trillion Parameter Models (arXiv:1910.02054)",
        "https://arxiv.org/abs/1910.02054")  # fmt: skip
KORTHIKANTI = ("Korthikanti et al., Reducing Activation Recomputation in Large Transformer Models (arXiv:2205.05198)",
               "https://arxiv.org/abs/2205.05198")  # fmt: skip


def fsdp_bytes() -> Problem:
    params, ranks = 7e9, 8
    per = memory.state_bytes_per_param("zero3", ranks)
    ddp = memory.state_bytes_per_param("ddp", ranks)
    unit = memory.fsdp2_unit_transient_bytes_per_param("bfloat16", "float32")
    return Problem(
        id="fsdp-bytes",
        title="Model states of a 7B model under FSDP",
        question=f"A {params / 1e9:.0f}B-parameter model trains with Adam under FSDP on {ranks} GPUs, with bf16 "
        "parameters and gradients and an fp32 optimizer state (master weights, momentum, variance). How many bytes "
        "of model states does each GPU hold?",
        answer=f"{per['total']:g} bytes per parameter, {per['total'] * params / 1e9:.0f} GB per GPU, against "
        f"{ddp['total'] * params / 1e9:.0f} GB each under plain data parallelism; the unit being computed adds "
        f"{unit} B per parameter of that unit while it runs.",
        working=(
            f"Mixed-precision Adam keeps 2 B of bf16 parameters, 2 B of gradients and {memory.ZERO_K} B of fp32 "
            f"optimizer state per parameter: {ddp['total']:g} B, replicated by DDP.",
            f"Full sharding (ZeRO stage 3, FSDP) splits all three over {ranks} GPUs: {per['params']:g} + "
            f"{per['grads']:g} + {per['optimizer']:g} = {per['total']:g} B per parameter.",
            f"× {params:,.0f} parameters = {per['total'] * params:,.0f} B per GPU.",
            f"While a unit runs it holds its all-gathered bf16 parameters, their bf16 gradients and an fp32 "
            f"reduce-scatter input: {memory.DTYPE_BYTES['bfloat16']} + {memory.DTYPE_BYTES['bfloat16']} + "
            f"{memory.DTYPE_BYTES['float32']} = {unit} B per parameter of the unit (activations come on top).",
        ),
        sources=(ZERO,),
    )


def ring_time() -> Problem:
    ranks, size = 8, 2**30
    record = records.load(COLLECTIVES_H100X2, CollectiveBandwidth)
    largest = max((r for r in record.rows if r.op == "all_reduce"), key=lambda r: r.size_bytes)
    n = 4 * ranks  # float32 elements, one chunk of 4 per rank: the byte count scales with the size
    sent = collectives.ring_all_reduce([np.full(n, r + 1, np.float32) for r in range(ranks)])
    per_rank = sent.bytes_sent_per_rank[0] / (4 * n) * size
    seconds = size * collectives.bus_factor("all_reduce", ranks) / largest.busbw
    return Problem(
        id="ring-all-reduce",
        title="All-reducing 1 GiB of gradients over 8 GPUs",
        question=f"A ring all-reduce sums 1 GiB of gradients over {ranks} GPUs. How many steps does it take, how "
        "many bytes does each GPU send, and how long would it take at the bus bandwidth two NVLink-joined H100s "
        "measured?",
        answer=f"{sent.steps} steps; each GPU sends {per_rank / 2**30:.3f} GiB; about {seconds * 1e3:.1f} ms at "
        f"{largest.busbw / 1e9:.0f} GB/s of bus bandwidth.",
        working=(
            f"Each array is cut into {ranks} chunks; the reduce-scatter takes {ranks - 1} steps, the all-gather "
            f"{ranks - 1} more: {sent.steps}.",
            f"Every step each GPU sends one chunk, 1/{ranks} GiB: 2·({ranks} − 1)/{ranks} = "
            f"{collectives.bus_factor('all_reduce', ranks):.3f} GiB per GPU (the simulation counts the bytes).",
            f"nccl-tests' bus bandwidth is algbw × 2(n − 1)/n, comparable across rank counts; the two-H100 record's "
            f"largest all-reduce ({largest.size_bytes / 2**30:.0f} GiB) reached {largest.busbw / 1e9:.1f} GB/s.",
            f"Time ≈ size × factor / busbw = 1 GiB × {collectives.bus_factor('all_reduce', ranks):.3f} / "
            f"{largest.busbw / 1e9:.1f} GB/s = {seconds * 1e3:.2f} ms, if eight GPUs' links sustain what two did.",
        ),
    )


def activation_memory() -> Problem:
    batch, seq, hidden, heads, layers = 1, 4096, 4096, 32, 32
    full = memory.block_activation_bytes(batch, seq, hidden, heads, 2)
    kept = memory.checkpointed_block_bytes(batch, seq, hidden, 2)
    return Problem(
        id="activation-checkpointing",
        title="What activation checkpointing saves",
        question=f"A transformer block with hidden size {hidden:,} and {heads} heads trains on {seq:,}-token "
        f"sequences (batch {batch}, bf16, no dropout, no fused attention). How many bytes does it keep for backward, "
        f"with and without a checkpoint around the block, and for {layers} such blocks?",
        answer=f"{full / 2**30:.2f} GiB per block without checkpointing, {kept / 2**20:.0f} MiB with it; "
        f"{layers * full / 2**30:.1f} GiB against {layers * kept / 2**30:.0f} GiB (plus one block's "
        f"{full / 2**30:.2f} GiB while it is recomputed) for {layers} blocks.",
        working=(
            f"Saved tensors: 16·b·s·h = {16 * batch * seq * hidden:,} elements of the block's linear layers and "
            f"norms, plus the softmax output a·b·s² = {heads * batch * seq * seq:,}, at 2 B each, plus the norms' "
            f"fp32 statistics: {full:,} B.",
            f"A checkpoint keeps only the block's input, b·s·h × 2 B = {kept:,} B, and recomputes the rest in "
            "backward.",
            "The s² term dominates at long sequences; a fused attention kernel does not save the softmax output.",
        ),
        sources=(KORTHIKANTI,),
    )


def bus_bandwidth() -> Problem:
    ranks, size, seconds = 8, 2**30, 5e-3
    algbw, busbw = collectives.bandwidths("all_reduce", size, seconds, ranks)
    return Problem(
        id="bus-bandwidth",
        title="Reading nccl-tests' two bandwidths",
        question=f"nccl-tests reports an all-reduce of 1 GiB on {ranks} GPUs taking {seconds * 1e3:g} ms. What "
        "algorithm bandwidth and bus bandwidth does it print?",
        answer=f"algbw {algbw / 1e9:.1f} GB/s and busbw {busbw / 1e9:.1f} GB/s.",
        working=(
            f"algbw = S / t = {size:,} B / {seconds:g} s = {algbw / 1e9:.2f} GB/s.",
            f"busbw = algbw × 2(n − 1)/n = {algbw / 1e9:.2f} × {collectives.bus_factor('all_reduce', ranks):.3f} = "
            f"{busbw / 1e9:.2f} GB/s: what each GPU's link carried, to compare with the link's speed.",
        ),
        sources=(
            ("nccl-tests, doc/PERFORMANCE.md", "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"),
        ),
    )


def problems() -> list[Problem]:
    """The chapter's worked problems, computed now."""
    return [fsdp_bytes(), ring_time(), activation_memory(), bus_bandwidth()]

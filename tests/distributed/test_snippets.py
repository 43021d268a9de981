"""Run the distributed chapter's snippets as a reader would and assert what they print, computed independently."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest


def check_fsdp_config(out: str) -> None:
    lines = out.splitlines()
    assert lines[0] == (
        "FSDP2 mp_policy: MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, "
        "output_dtype=None, cast_forward_inputs=True)"
    )
    assert lines[1] == "FSDP1 mixed_precision: torch.bfloat16 buffers"  # PURE: buffers in the compute dtype too
    assert lines[2] == "checkpoint_impl: CheckpointImpl.NO_REENTRANT"
    assert lines[3] == "reshard_after_forward: True"  # FULL_SHARD
    assert lines[4] == "mesh for 8 ranks, 2 replicas: (2, 4)"
    assert lines[5].startswith("error: unknown fsdp_config keys ['mixed_precison']; valid keys are [")
    assert "'mixed_precision'" in lines[5]
    assert "'activation_checkpointing_reentrant'" in lines[5]


def check_ring_allreduce(out: str) -> None:
    lines = out.splitlines()
    assert lines[0] == "every rank holds the sum: True"
    assert lines[1] == "steps: 6"  # 2(p - 1)
    assert lines[2] == f"bytes sent per rank: {2 * 3 * 4096 // 4} = 2(p-1)/p * S = 6144"
    algbw = (1 << 30) / 0.01
    assert lines[3] == f"1 GiB in 10 ms on 4 ranks: algbw {algbw / 1e9:.1f} GB/s, busbw {algbw * 1.5 / 1e9:.1f} GB/s"


def check_memory_budget(out: str) -> None:
    rows = dict(re.findall(r"^(\w+)\s+([\d.]+) B/param", out, flags=re.M))
    # ZeRO (Rajbhandari et al. 2020): 2 + 2 + 12 bytes, sharded stage by stage over N = 8
    assert {k: float(v) for k, v in rows.items()} == {
        "ddp": 16.0,
        "zero1": 4 + 12 / 8,
        "zero2": 2 + 14 / 8,
        "zero3": 16 / 8,
        "fsdp2": 16 / 8,
    }
    b, s, h, a = 1, 4096, 4096, 32
    full = 2 * (16 * b * s * h + a * b * s * s) + 4 * b * s * 4
    assert (
        out.splitlines()[-2] == f"block activations: {full / 2**30:.2f} GiB, checkpointed: {2 * s * h / 2**30:.3f} GiB"
    )
    fused = 2 * 16 * b * s * h + 4 * a * b * s + 4 * b * s * 4  # a float32 log-sum-exp per row, no a·b·s² softmax
    assert out.splitlines()[-1] == f"with fused attention: {fused / 2**30:.2f} GiB"
    assert (full / 2**30, fused / 2**30) == (pytest.approx(1.5, abs=0.005), pytest.approx(0.5, abs=0.005))


def check_median_interval(out: str) -> None:
    lines = out.splitlines()
    # n = 12: P(X <= 2) = (1 + 12 + 66) / 4096 for X ~ Binomial(12, 1/2), so j = 3 covers 1 - 2 * 79/4096 = 0.9614;
    # j = 4 would cover 1 - 2 * 299/4096 = 0.854, under 95%
    assert lines[0] == f"median interval: 1.0 to 1.03, coverage {1 - 2 * 79 / 4096:.4f}"
    assert lines[1] == f"1 - 2 P(Binomial(12, 1/2) < 3) = {1 - 2 * 79 / 4096:.4f}"
    assert lines[2] == "sorted: [0.98, 0.99, 1.0, 1.01, 1.01, 1.01, 1.02, 1.02, 1.02, 1.03, 1.03, 1.04]"


CHECKS: dict[str, Callable[[str], None]] = {
    "snippets/distributed/fsdp_config.py": check_fsdp_config,
    "snippets/distributed/ring_allreduce.py": check_ring_allreduce,
    "snippets/distributed/memory_budget.py": check_memory_budget,
    "snippets/distributed/median_interval.py": check_median_interval,
}

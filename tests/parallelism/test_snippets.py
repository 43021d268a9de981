"""What the chapter's snippets print, checked against arithmetic done here."""

from __future__ import annotations

import re
from collections.abc import Callable


def check_traffic(out: str) -> None:
    lines = out.splitlines()
    whole = 1 * 2048 * 12288 * 2  # b·s·h bf16 bytes
    tp = 4 * 2 * 3 * whole // 4  # four all-reduces, 2(p-1)/p each
    assert lines[0] == f"TP collectives: {{'all_reduce': 4}} sent per GPU: {tp // 2**20} MiB"
    norms = 4 * 2 * 3 * 12288 * 2 // 4  # four all-reduces of h bf16 values
    assert lines[1] == (
        "TP + SP collectives: {'all_gather': 4, 'reduce_scatter': 4, 'all_reduce': 4} sent per GPU: "
        f"{(tp + norms) // 2**20} MiB"
    )
    assert lines[2] == "bubble (p-1)/(m+p-1): 3/11"
    assert lines[3] == "1F1B replayed: bubble 3/11 micro-batches held per stage [4, 3, 2, 1]"


def check_tensor_parallel(out: str) -> None:
    rows = re.findall(r"^rank (\d): output equals one process: (\w+), W1 shard \((\d+), (\d+)\), forward collectives "
                      r"(\{.*\})$", out, flags=re.M)  # fmt: skip
    assert [r[0] for r in rows] == ["0", "1"]
    for _, equal, rows_, cols, collectives in rows:
        assert equal == "True"
        assert (int(rows_), int(cols)) == (4 * 16 // 2, 16)  # W1 is 64 × 16, split by output rows over 2 ranks
        assert collectives == "{'all_reduce': 1}"  # the row-parallel W2's partial sums, reduced once


CHECKS: dict[str, Callable[[str], None]] = {
    "snippets/parallelism/traffic.py": check_traffic,
    "snippets/parallelism/tensor_parallel.py": check_tensor_parallel,
}

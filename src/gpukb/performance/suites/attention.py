"""Attention forward throughput of each ``scaled_dot_product_attention`` backend.

Shapes follow the FlashAttention-2 paper's benchmark: batch × sequence length = 16 384 tokens and a model width
of 2048, so 32 heads of dimension 64 or 16 heads of dimension 128; with and without a causal mask. Each backend
is forced with ``torch.nn.attention.sdpa_kernel``; a backend that refuses a shape is recorded with its error.
"""

from __future__ import annotations

from gpukb.measuring.counting import attention_flops
from gpukb.measuring.stats import summarize
from gpukb.performance.results import AttentionRecord
from gpukb.performance.suites import Context, first_line

BACKENDS = ("flash", "efficient", "cudnn", "math")
TOKENS = 16384
WIDTH = 2048
SEQS = {"full": (1024, 2048, 4096, 8192, 16384), "quick": (2048,)}
HEAD_DIMS = {"full": (64, 128), "quick": (128,)}
CAUSAL = {"full": (False, True), "quick": (False,)}
#: The math backend materializes the S×S score matrix per head; it is not run on longer sequences.
MATH_MAX_SEQ = 8192


def cases(mode: str) -> list[tuple[str, int, int, int, int, bool]]:
    """The (backend, batch, heads, seq, head_dim, causal) cases of a mode."""
    if mode not in SEQS:
        raise ValueError(f"mode must be one of {sorted(SEQS)}; got {mode!r}")
    return [
        (backend, TOKENS // seq, WIDTH // d, seq, d, causal)
        for seq in SEQS[mode]
        for d in HEAD_DIMS[mode]
        for causal in CAUSAL[mode]
        for backend in BACKENDS
    ]


def run(ctx: Context) -> list[AttentionRecord]:
    """Measure every case in bf16."""
    torch = ctx.torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    kinds = {
        "flash": SDPBackend.FLASH_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
        "math": SDPBackend.MATH,
    }
    todo = cases(ctx.mode)
    records = []
    for index, (backend, batch, heads, seq, d, causal) in enumerate(todo, start=1):
        record: dict = {"ms": None, "tflops": None}
        if backend == "math" and seq > MATH_MAX_SEQ:
            record["error"] = f"not run: the math backend is only measured up to {MATH_MAX_SEQ} tokens"
        else:
            q, k, v = (torch.randn(batch, heads, seq, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            try:
                with sdpa_kernel([kinds[backend]]):
                    measured = ctx.measure(lambda q=q, k=k, v=v, c=causal: sdpa(q, k, v, is_causal=c))
                ms = summarize(measured.samples)
                record["ms"] = ms
                record["clocks"] = measured.window
                flops = attention_flops(batch, heads, seq, seq, d, causal)
                record["tflops"] = flops / (ms.median * 1e-3) / 1e12
            except RuntimeError as err:
                record["error"] = first_line(err)
            del q, k, v
        records.append(
            AttentionRecord(
                backend=backend, dtype="bf16", batch=batch, heads=heads, seq=seq, head_dim=d, causal=causal, **record
            )
        )
        shown = f"{record['tflops']:6.1f} TFLOP/s" if record["tflops"] else record.get("error", "")
        ctx.progress(
            f"attention {index}/{len(todo)} {backend:<9} b={batch} h={heads} s={seq} d={d} causal={causal}: {shown}"
        )
    return records

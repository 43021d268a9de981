"""Worked problems of the GEMM chapter, every answer computed by the library (see :mod:`gpukb.problems`).

The Llama-3-8B shapes are the GEMM sweep's own (:data:`gpukb.gemm.triton.sweep.LLAMA`), datasheet figures those of
``gpu_specs.toml`` with their sources."""

from __future__ import annotations

from gpukb.cuda import limits
from gpukb.gemm import blocking, types
from gpukb.gemm.triton.configs import Config, split_for
from gpukb.gemm.triton.sweep import LLAMA
from gpukb.measuring.counting import element_bytes, gemm_bytes, gemm_flops
from gpukb.performance import specs
from gpukb.performance.problems import LLAMA3_PAPER, datasheet
from gpukb.performance.roofline import bound, ridge_point
from gpukb.problems import Problem


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs"


def _h100() -> specs.Gpu:
    return specs.load().gpu("h100-sxm5")


def _source(figure: specs.Figure) -> tuple[str, str]:
    source = specs.load().sources[figure.source]
    return source.title, source.url


def compute_bound_batch(n: int = 4096, k: int = 4096) -> Problem:
    gpu = _h100()
    ridge = specs.datasheet_ridge(gpu, "bf16")
    size = element_bytes("bf16")

    def intensity(m: int) -> float:
        return gemm_flops(m, n, k) / gemm_bytes(m, n, k, size)

    m = 1
    while intensity(m) < ridge:  # intensity grows with m towards n·k/(n+k) (here 2,048), so this ends
        m += 1
    peak = specs.datasheet_peak(gpu, "bf16")
    return Problem(
        id="compute-bound-batch",
        title="When a linear layer becomes compute-bound",
        question=f"A bf16 linear layer with a {k:,} × {n:,} weight runs on an H100. From how many tokens (rows m) "
        "on can it be compute-bound rather than memory-bound?",
        answer=f"From m = {m:,} tokens: its intensity is then {intensity(m):,.1f} FLOP/B, just above the H100's "
        f"datasheet ridge point of {ridge:,.1f}; at m = {m - 1:,} it is {intensity(m - 1):,.1f}.",
        working=(
            f"Intensity of (m × {k:,}) · ({k:,} × {n:,}) in bf16: 2·m·{n:,}·{k:,} FLOP over "
            f"2·(m·{k:,} + {k:,}·{n:,} + m·{n:,}) bytes.",
            f"Ridge point: {peak.dense:,.1f} TFLOP/s dense bf16 / {gpu.figure('memory_bandwidth').value:,.0f} GB/s "
            f"= {ridge:,.1f} FLOP/B.",
            f"At m = 1 the intensity is {intensity(1):.2f}; it first reaches the ridge at m = {m:,} "
            f"(for m ≪ {k:,} it is about m, since the weight's bytes dominate).",
            "Decoding at batch 1 to a few hundred tokens is therefore memory-bound on this layer whatever the kernel.",
        ),
        sources=(_source(peak),),
    )


def shared_memory_block() -> Problem:
    cap = limits.capability("9.0")
    fast = cap.shared_per_block // element_bytes("fp32")
    b = blocking.largest_block(fast)
    n = 4096
    tiles = n // b
    moves = blocking.slides_moves(n, tiles)
    q = blocking.intensity(2 * n**3, moves)
    return Problem(
        id="shared-memory-block",
        title="The largest block that fits shared memory",
        question="A hand-written fp32 GEMM keeps its A, B and C tiles in the 48 KiB of shared memory a block gets "
        f"without opting in. What is the largest square block, and how many elements does a {n:,}³ product then "
        "move?",
        answer=f"b = {b} ({3 * b * b:,} of {fast:,} fp32 elements); the {n:,}³ product moves {moves:,} elements, "
        f"{q:,.1f} FLOP per element moved.",
        working=(
            f"Default shared memory per block on compute capability 9.0: {cap.shared_per_block:,} B = {fast:,} fp32 "
            "elements.",
            f"Three b × b tiles must fit: 3b² ≤ {fast:,}, so b = ⌊√({fast:,}/3)⌋ = {b}.",
            f"N = {n:,}/{b} = {tiles} tiles per side; moves (2N + 2)·n² = {2 * tiles + 2}·{n:,}² = {moves:,}.",
            f"Intensity 2n³ / moves = {q:,.1f} FLOP per element, about b: a larger block would move less, but its "
            "tiles would not fit.",
        ),
        sources=((limits.table().sources["guide"].title, limits.table().sources["guide"].url),),
    )


def fp8_pair_on_h100() -> Problem:
    table = types.table("cublaslt")
    refusal = next(r for r in table.refusals if (r.a, r.b) == ("e5m2", "e5m2"))
    near = types.nearest("cublaslt", a="e5m2", b="e5m2", arch="sm_90", limit=8)
    pairs = sorted({(row.a, row.b) for _, row in near})
    bf16 = types.check("cublaslt", a=pairs[0][0], b=pairs[0][1], d="bf16", arch="sm_90")
    layouts = sorted({row.layout_on("sm_90") for row in bf16})
    return Problem(
        id="fp8-pair",
        title="Two E5M2 operands on an H100",
        question="A backward pass multiplies two E5M2 tensors with cuBLASLt on an H100. Does cuBLASLt accept "
        "E5M2 × E5M2, and what is the nearest combination it does accept?",
        answer=f"No: {refusal.reason}. The nearest accepted pairs are "
        f"{' and '.join(f'{a} × {b}' for a, b in pairs)}, e.g. {pairs[0][0]} × {pairs[0][1]} with a bf16 D, layout "
        f"{', '.join(layouts)}.",
        working=(
            f"`types.check('cublaslt', a='e5m2', b='e5m2', arch='sm_90')` finds no row and names the refusal the "
            f"sources record ({', '.join(s.id for s in refusal.sources)}).",
            f"`types.nearest(...)` ranks rows by fields matched: the best keep one E5M2 operand and the architecture: "
            f"{', '.join(f'{a} × {b}' for a, b in pairs)}.",
            f"`types.check('cublaslt', a='{pairs[0][0]}', b='{pairs[0][1]}', d='bf16', arch='sm_90')` returns "
            f"{len(bf16)} {'row' if len(bf16) == 1 else 'rows'}, layout {', '.join(layouts)} (A transposed, B not: "
            "both K-major).",
        ),
        sources=tuple((s.title, s.url) for s in bf16[0].sources if s.url.startswith("https://")),
    )


def split_k_fill() -> Problem:
    sms = int(_h100().figure("sm_count").value)
    config = Config("splitk", 128, 128, 64)
    m = n = 256
    k = 16384
    tiles = (m // config.block_m) * (n // config.block_n)
    split = split_for(m, n, k, config, sms)
    return Problem(
        id="split-k",
        title="Filling an H100 with a skinny product",
        question=f"A {m} × {n} × {k:,} product (a weight gradient over many tokens) runs with 128 × 128 output tiles "
        f"on an H100's {sms} SMs. How much of the GPU does one program per tile fill, and how many K slices does the "
        "split-K kernel choose?",
        answer=f"{tiles} programs fill {tiles / sms:.0%} of the SMs; split-K cuts K into {split} slices of "
        f"about {k // split:,}, {tiles * split} programs, {tiles * split / sms:.0%} of the SMs.",
        working=(
            f"Tiles: ({m}/128)·({n}/128) = {tiles}, one program each, on {sms} SMs.",
            f"`split_for` takes the most slices that still fit one round: ⌊{sms}/{tiles}⌋ = {sms // tiles}, capped by "
            f"K steps (each slice at least four of {config.block_k}: {k // (4 * config.block_k)}) and by 128.",
            f"{split} slices × {tiles} tiles = {tiles * split} programs; a second kernel adds the {split} fp32 "
            "partial sums of each tile.",
        ),
    )


def llama_mlp_on_h200() -> Problem:
    _, n, k = LLAMA[0]
    m = 4096
    peak, peak_source = datasheet("h200-sxm", "bf16_tensor")
    bandwidth, _ = datasheet("h200-sxm", "memory_bandwidth")
    flops, nbytes = gemm_flops(m, n, k), gemm_bytes(m, n, k, element_bytes("bf16"))
    b = bound(flops, nbytes, peak * 1e12, bandwidth * 1e9)
    ridge = ridge_point(peak * 1e12, bandwidth * 1e9)
    return Problem(
        id="llama-mlp-h200",
        title="A Llama MLP projection on an H200",
        question=f"What is the lower bound on the time of Llama-3-8B's MLP up projection ({k:,} → {n:,}) over "
        f"{m:,} tokens in bf16 on an H200, and what limits it?",
        answer=f"{_us(b.time_s)}, set by {b.limiter}: {flops / 1e12:.3f} TFLOP at {peak:,.1f} TFLOP/s; its "
        f"{nbytes / 1e6:,.1f} MB would take only {_us(b.memory_s)} at {bandwidth:,.0f} GB/s.",
        working=(
            f"The product is ({m:,} × {k:,}) · ({k:,} × {n:,}): 2·m·n·k = {flops:,} FLOP.",
            f"Fewest bytes: read A and B, write C once, 2 bytes each: ({m:,}·{k:,} + {k:,}·{n:,} + {m:,}·{n:,}) × 2 "
            f"= {nbytes:,} B; intensity {flops / nbytes:,.0f} FLOP/B.",
            f"H200 datasheet: {peak:,.1f} TFLOP/s dense bf16 (half the published sparse rate) and {bandwidth:,.0f} "
            f"GB/s, a ridge point of {ridge:,.0f} FLOP/B; the product's intensity is above it, so compute bounds it.",
            f"Compute: {flops:,} / {peak:,.1f}e12 = {_us(b.compute_s)}; memory: {nbytes:,} / {bandwidth:,.0f}e9 = "
            f"{_us(b.memory_s)}. The floor is the larger, {_us(b.time_s)}; a real kernel reaches a fraction of the "
            "datasheet rate, so expect more.",
        ),
        sources=(LLAMA3_PAPER, peak_source),
    )


def problems() -> list[Problem]:
    """The chapter's worked problems, computed now."""
    return [llama_mlp_on_h200(), compute_bound_batch(), shared_memory_block(), fp8_pair_on_h100(), split_k_fill()]

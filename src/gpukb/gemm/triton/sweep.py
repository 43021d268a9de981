"""The shapes the Triton GEMM is swept on (``bench/triton_gemm_sweep.py``), and the sweep registered as kernel
pairs for ``gpukb bench``: ``triton-gemm-sweep-bf16``, ``-fp16`` (against ``torch.matmul``) and ``-fp8`` (against
``torch._scaled_mm`` without fast accumulation). Torch-free until a pair is measured.

Shapes: squares from 256 to 16384; odd sizes (3000³, 4095×4097×4099, whose rows are not 16-byte aligned);
Llama-3-8B's MLP and LM-head projections (4096→14336, 14336→4096, 4096→128256) at M = 1, 8, 64, 512, 4096 and
16384 tokens; K-heavy products (M·N small, K long); tall-skinny ones. fp16 runs a subset (GPU time is scarce),
FP8 the shapes ``_scaled_mm`` takes (every dimension a multiple of 16) with M ≥ 64.
"""

from __future__ import annotations

from typing import Any

from gpukb.dtypes import torch_dtype

#: Llama-3-8B's projections as (name, N, K): the MLP's up/gate and down, and the LM head.
LLAMA = (
    ("Llama-3-8B MLP up/gate 4096→14336", 14336, 4096),
    ("Llama-3-8B MLP down 14336→4096", 4096, 14336),
    ("Llama-3-8B LM head 4096→128256", 128256, 4096),
)
LLAMA_TOKENS = (1, 8, 64, 512, 4096, 16384)

#: One shape of the sweep: (group, label, M, N, K).
Shape = tuple[str, str, int, int, int]


def shapes() -> list[Shape]:
    """Every bf16 shape of the sweep, in the sweep's order."""
    out: list[Shape] = [("square", f"{s}³", s, s, s) for s in (256, 512, 1024, 2048, 3000, 4096, 8192, 16384)]
    out += [
        ("odd", "4095×4097×4099", 4095, 4097, 4099),
        ("odd", "1023×1025×1027", 1023, 1025, 1027),
        ("odd", "4096×4096×4160", 4096, 4096, 4160),
    ]
    for m in LLAMA_TOKENS:
        out += [("llm", f"{label}, M={m}", m, n, k) for label, n, k in LLAMA]
    out += [
        ("k-heavy", "2048×2048×8192", 2048, 2048, 8192),
        ("k-heavy", "512×512×16384", 512, 512, 16384),
        ("k-heavy", "1024×1024×32768", 1024, 1024, 32768),
        ("k-heavy", "128×128×65536", 128, 128, 65536),
        ("tall-skinny", "32768×128×4096", 32768, 128, 4096),
        ("tall-skinny", "65536×64×2048", 65536, 64, 2048),
        ("tall-skinny", "128×14336×4096", 128, 14336, 4096),
    ]
    return out


def fp16_shapes() -> list[Shape]:
    """The fp16 subset: every group but the LLM shapes, which run at M = 1, 64 and 4096 only."""
    return [s for s in shapes() if s[0] != "llm" or s[2] in (1, 64, 4096)]


def fp8_shapes() -> list[Shape]:
    """FP8: every dimension a multiple of 16 (``_scaled_mm`` needs it), LLM shapes at M ≥ 64."""
    return [s for s in shapes() if all(x % 16 == 0 for x in s[2:]) and not (s[0] == "llm" and s[2] < 64)]


#: bf16 products with B the transpose of a row-major N×K weight, as in ``x @ w.t()``.
NT_SHAPES: tuple[Shape, ...] = (
    ("llm", "Llama-3-8B MLP up/gate 4096→14336, M=8, B = W.t()", 8, 14336, 4096),
    ("llm", "Llama-3-8B MLP up/gate 4096→14336, M=4096, B = W.t()", 4096, 14336, 4096),
    ("llm", "Llama-3-8B MLP down 14336→4096, M=512, B = W.t()", 512, 4096, 14336),
)


#: The products issue 29 reported (a user's shapes, measured in the same process as cuBLAS): under-filled waves
#: (GPT-2's MLP at 2304 tokens: 54 tiles of 128×256 for 132 multiprocessors), rows off 128-byte lines (2000³), a
#: Llama-2 MLP with the weight transposed (``x @ w.t()``) and with A transposed. With their layouts.
ISSUE_SHAPES: tuple[tuple[str, Shape], ...] = (
    ("NN", ("issue", "GPT-2 MLP down 3072→768 at 2304 tokens, x @ W", 2304, 768, 3072)),
    ("NT", ("issue", "GPT-2 MLP down 3072→768 at 2304 tokens, x @ w.t()", 2304, 768, 3072)),
    ("NN", ("issue", "2000³", 2000, 2000, 2000)),
    ("NT", ("issue", "Llama-2-7B MLP up 4096→11008, M=512, x @ w.t()", 512, 11008, 4096)),
    ("TN", ("issue", "Llama-2-7B MLP up 4096→11008, M=512, A transposed", 512, 11008, 4096)),
)

#: What the issue-29 tuning run tuned on, one representative per class (``bench/triton_gemm_sweep.py --tune
#: issue29``): the issue's products, a tiny product, rows off 128-byte lines at three sizes (the bf16 rows of
#: 1000, 2000 and 5000 columns start 16, 32 and 16 bytes off a line), and the persistent kernel's large and
#: decode products in the two transposed layouts. None is a shape of the random sweep.
ISSUE_TUNING: tuple[tuple[str, tuple[int, int, int]], ...] = (
    *((layout, (m, n, k)) for layout, (_, _, m, n, k) in ISSUE_SHAPES),
    ("NN", (3, 5, 7)),
    ("NN", (1000, 1000, 1000)),
    ("NN", (5000, 5000, 5000)),
    ("NT", (4096, 4096, 4096)),
    ("TN", (4096, 4096, 4096)),
    ("NT", (8, 14336, 4096)),
    ("TN", (8, 14336, 4096)),
)

#: What the third tuning run tuned on (``bench/triton_gemm_sweep.py --tune losers``), one representative per class:
#: every product of the random sweep (its results were read, so it is now tuned on, not held out), two of issue 29's
#: products still under 0.9, and the first sweep's products under 0.9 of cuBLAS (3000³, whose rows start off
#: 128-byte lines; small squares; a long K with M = 512), the worst first (a run short of time tunes those). None
#: is a product of the held-out sweep (``held_out("held-out")``), drawn before this tuning: the random sweep's
#: 1×896×4864 (Qwen2-0.5B's MLP down at one token, NT) was drawn again there, so it is left out here.
LOSER_TUNING: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("NT", (67, 4864, 896)),
    ("NT", (29, 4096, 1024)),
    ("NN", (1481, 13824, 5120)),
    ("TN", (1024, 1024, 1625)),
    ("NT", (512, 11008, 4096)),
    ("NN", (4931, 2048, 2048)),
    ("NT", (2005, 3072, 1024)),
    ("NT", (2304, 768, 3072)),
    ("NT", (577, 768, 768)),
    ("NT", (3, 2304, 768)),
    ("NN", (8, 4096, 4096)),
    ("NN", (22, 4096, 128256)),
    ("NN", (3000, 3000, 3000)),
    ("NN", (1024, 1024, 1024)),
    ("NN", (512, 4096, 14336)),
    ("NT", (512, 4096, 14336)),
    ("NN", (512, 512, 16384)),
    ("NN", (512, 512, 512)),
    ("NN", (47, 896, 4864)),
    ("NT", (12713, 4096, 4096)),
    ("NN", (58, 4096, 3072)),
    ("NN", (6, 13824, 5120)),
    ("NT", (27, 12288, 4096)),
    ("NT", (9, 2304, 768)),
    ("NT", (8945, 4096, 14336)),
    ("TN", (2048, 16384, 1244)),
    ("TN", (32000, 4096, 147)),
    ("TN", (8192, 8192, 16)),
)

#: What the fourth tuning run tuned on (``bench/triton_gemm_sweep.py --tune gaps``): shapes designed for the classes
#: the three tables before it left empty, where the held-out sweep's products fell back on a neighbouring class
#: (small N with a long K and many rows, mid-size M with N ≤ 1024, M from 65 to 256 with a long K, K beyond 16384 at
#: mid size, many rows with N and K ≤ 1024). One representative per class, none a product of any sweep.
GAP_TUNING: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("NT", (8192, 768, 6144)),
    ("NT", (6144, 1024, 2048)),
    ("NT", (768, 1024, 4096)),
    ("NN", (768, 1024, 4096)),
    ("NT", (192, 1024, 2048)),
    ("NN", (128, 1024, 8192)),
    ("NT", (128, 1024, 8192)),
    ("NN", (2560, 2560, 20480)),
    ("NN", (8192, 512, 512)),
    ("NT", (8192, 512, 512)),
)

#: What the fifth tuning run tuned on (``bench/triton_gemm_sweep.py --tune fill``): shapes designed for the decode
#: classes (M ≤ 64; mostly forward products, ``x @ w.t()``, whose weight read is the whole cost), one per bucket of N
#: and K that model layers fill, and three products above 64 rows whose tiles fill less than one wave, in classes no
#: table had (K long, N mid-size; N beyond 16384 at 65–256 rows; N 4097–16384 at 513–1024 rows). None is a product
#: of any sweep (a test checks it).
FILL_TUNING: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("NT", (4, 1024, 1024)),
    ("NT", (4, 2560, 1024)),
    ("NT", (4, 4096, 4096)),
    ("NT", (4, 4096, 11008)),
    ("NT", (4, 5120, 4096)),
    ("NT", (4, 1024, 4096)),
    ("NT", (8, 8192, 1024)),
    ("NT", (40, 768, 768)),
    ("NT", (40, 2560, 2560)),
    ("NT", (24, 3072, 768)),
    ("NT", (40, 5120, 4096)),
    ("NN", (4, 4096, 4096)),
    ("NN", (40, 1024, 1024)),
    ("NT", (896, 3072, 8192)),
    ("NN", (192, 24576, 6144)),
    ("NT", (640, 8192, 2048)),
)

#: What step 12 timed one stream-K round on (``bench/triton_gemm_sweep.py --tune streamk``): products whose last round
#: of tiles is part full, all of them already seen (3000³ of the first sweep, 128×256 tiles: 288 tiles, two rounds of
#: 132 and 24; the fifth held-out draw's 896×4864×7503 weight gradient; issue 29's Llama-2 and GPT-2 products), and
#: two products already level with cuBLAS as guards (4096³, Llama-3-8B's MLP up at 4096 tokens).
STREAMK_TUNING: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("NN", (3000, 3000, 3000)),
    ("TN", (896, 4864, 7503)),
    ("NT", (512, 11008, 4096)),
    ("NN", (2304, 768, 3072)),
    ("NN", (4096, 4096, 4096)),
    ("NT", (4096, 14336, 4096)),
)

#: What step 14 timed tiles of two blocks on (``bench/triton_gemm_sweep.py --tune twoblock``): seven of the eight
#: products step 13 listed (furthest behind cuBLAS with K whole on both sides, cuBLAS's tile not a power of two on a
#: side), those of the fifth held-out sweep (seen since step 11), and 593×3584×3584 of the same sweep; 3000³ of the
#: first sweep; and three products level with cuBLAS as guards (4096³, Llama-3-8B's MLP up at 4096 tokens, 8192³).
#: None is a product of the fourth held-out sweep. (One product a class: the run times the first product of each.)
TWO_BLOCK_TUNING: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("TN", (896, 4864, 7503)),
    ("NT", (1170, 4096, 14336)),
    ("NT", (163, 12288, 3072)),
    ("NT", (821, 3584, 18944)),
    ("NN", (3903, 768, 3072)),
    ("NN", (1970, 5120, 32000)),
    ("NT", (7087, 3072, 24576)),
    ("NT", (593, 3584, 3584)),
    ("NN", (3000, 3000, 3000)),
    ("NN", (4096, 4096, 4096)),
    ("NT", (4096, 14336, 4096)),
    ("NN", (8192, 8192, 8192)),
)

#: What step 16 timed tall tiles on (``bench/triton_gemm_sweep.py --tune tokens``): products of 65 to 320 rows (a
#: prefill or a batch of a few hundred tokens through a layer's weight), each in a class of its own: the seven of the
#: sixth held-out draw (seen since step 15's run, the draw's widest gaps among them), four of earlier held-out draws
#: (112×8192×8192, 86×4096×32000, 127×768×3072, 170×28672×8192). None is a product of the eighth draw
#: (``HELD_OUT_DRAWS["held-out-7"]``), drawn after this list (a test checks it).
TOKEN_TUNING: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("NN", (297, 14336, 4096)),
    ("NT", (156, 6144, 4096)),
    ("NT", (126, 768, 768)),
    ("NN", (90, 1024, 3072)),
    ("NT", (277, 6144, 4096)),
    ("NT", (263, 3072, 24576)),
    ("NT", (185, 4096, 4096)),
    ("NN", (112, 8192, 8192)),
    ("NN", (86, 4096, 32000)),
    ("NT", (127, 768, 3072)),
    ("NN", (170, 28672, 8192)),
)

#: What step 17 timed against the default tiling (``bench/triton_gemm_sweep.py --tune default``): every seen product
#: (of the random sweep and the held-out draws up to the eighth) of more than 320 rows and at least 2^30
#: multiply-adds whose look-up choice, with steps 15's and 16's rules, is not the default tiling (128×256, 4 stages,
#: subtiled epilogue). Several share a class; the run times every one. None is a product of the ninth draw
#: (``HELD_OUT_DRAWS["held-out-8"]``), drawn after this list (a test checks it).
DEFAULT_TUNING: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("NN", (1239, 8192, 8192)),
    ("TN", (10240, 8192, 99)),
    ("NT", (8305, 3072, 24576)),
    ("NT", (932, 768, 3072)),
    ("NN", (11640, 896, 896)),
    ("NT", (14101, 4096, 11008)),
    ("TN", (6144, 4096, 1453)),
    ("NT", (10443, 896, 4864)),
    ("TN", (28672, 8192, 226)),
    ("NN", (5197, 1024, 30522)),
    ("NN", (3708, 3584, 18944)),
    ("NT", (1052, 1024, 1024)),
    ("TN", (2048, 2048, 2054)),
    ("NT", (1209, 2048, 2048)),
    ("NT", (914, 2048, 16384)),
    ("TN", (1024, 4096, 1837)),
    ("NN", (5494, 4096, 32000)),
    ("NT", (2036, 3072, 1024)),
    ("TN", (3584, 3584, 314)),
    ("NN", (719, 1024, 30522)),
    ("NN", (362, 5120, 32000)),
    ("NN", (728, 2048, 16384)),
    ("NN", (427, 4096, 4096)),
    ("TN", (8192, 8192, 118)),
    ("NN", (1686, 768, 3072)),
    ("TN", (32000, 5120, 22)),
    ("NN", (7972, 24576, 3072)),
    ("NT", (674, 896, 4864)),
    ("TN", (128256, 8192, 21)),
    ("TN", (896, 4864, 7503)),
    ("NN", (1970, 5120, 32000)),
    ("NT", (593, 3584, 3584)),
    ("NN", (3903, 768, 3072)),
    ("NT", (1170, 4096, 14336)),
    ("NT", (7087, 3072, 24576)),
    ("NT", (1314, 1024, 4096)),
    ("NT", (793, 30522, 768)),
    ("TN", (768, 3072, 2710)),
    ("NN", (1497, 3072, 12288)),
    ("TN", (28672, 8192, 184)),
    ("NT", (3547, 5120, 5120)),
    ("NT", (322, 13824, 5120)),
    ("TN", (8192, 8192, 16)),
    ("NT", (8945, 4096, 14336)),
    ("NT", (2005, 3072, 1024)),
    ("NN", (4931, 2048, 2048)),
    ("TN", (1024, 1024, 1625)),
)

#: What step 18 timed split-K tilings on (``bench/triton_gemm_sweep.py --tune tokensplit``): every seen product (of the
#: random sweep, the held-out draws to the eighth and step 16's draw) of 65 to 320 rows whose look-up choice, with
#: steps 15 to 17's rules, is the split-K kernel. Several share a class; the run times every one.
TOKEN_SPLIT_TUNING: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("NT", (159, 768, 3072)),
    ("NN", (69, 896, 4864)),
    ("NT", (116, 2304, 768)),
    ("NN", (127, 2048, 256000)),
    ("NN", (112, 8192, 8192)),
    ("NT", (127, 768, 3072)),
    ("NN", (86, 4096, 32000)),
    ("NT", (90, 4096, 14336)),
    ("NT", (67, 768, 3072)),
    ("NT", (126, 768, 768)),
    ("NT", (263, 3072, 24576)),
    ("NN", (70, 768, 50257)),
    ("NN", (90, 1024, 3072)),
    ("NN", (174, 8192, 10240)),
    ("NN", (102, 896, 1152)),
    ("NT", (90, 4096, 4096)),
    ("NT", (71, 2304, 768)),
    ("NT", (132, 1024, 4096)),
    ("NT", (105, 1024, 4096)),
    ("NN", (108, 5120, 5120)),
    ("NN", (195, 3072, 12288)),
    ("NT", (99, 1024, 4096)),
    ("NN", (67, 1024, 30522)),
    ("NT", (99, 3072, 768)),
    ("NN", (87, 4096, 6144)),
)

#: What step 19 timed swapped tiles on (``bench/triton_gemm_sweep.py --tune swap``): every seen product (of the random
#: sweep, the eight held-out draws and the first two 65–320-row draws) of 65 to 320 rows, whatever its look-up
#: choice. None is a product of the third 65–320-row draw (``TOKEN_DRAWS["tokens-3"]``), drawn before this run (a test
#: checks it).
SWAP_TUNING: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("NT", (159, 768, 3072)),
    ("NT", (128, 32000, 4096)),
    ("NN", (69, 896, 4864)),
    ("NT", (209, 128256, 4096)),
    ("NT", (116, 2304, 768)),
    ("NN", (127, 2048, 256000)),
    ("NN", (170, 28672, 8192)),
    ("NN", (112, 8192, 8192)),
    ("NT", (127, 768, 3072)),
    ("NN", (86, 4096, 32000)),
    ("NT", (74, 28672, 8192)),
    ("NT", (163, 12288, 3072)),
    ("NT", (90, 4096, 14336)),
    ("NT", (256, 128256, 4096)),
    ("NT", (67, 768, 3072)),
    ("NT", (126, 768, 768)),
    ("NN", (297, 14336, 4096)),
    ("NT", (277, 6144, 4096)),
    ("NT", (263, 3072, 24576)),
    ("NT", (185, 4096, 4096)),
    ("NN", (70, 768, 50257)),
    ("NT", (156, 6144, 4096)),
    ("NN", (90, 1024, 3072)),
    ("NN", (174, 8192, 10240)),
    ("NT", (152, 6144, 4096)),
    ("NT", (264, 4096, 1024)),
    ("NT", (67, 4864, 896)),
    ("NN", (102, 896, 1152)),
    ("NT", (115, 32000, 4096)),
    ("NT", (90, 4096, 4096)),
    ("NN", (318, 5120, 13824)),
    ("NT", (310, 12288, 3072)),
    ("NT", (146, 6144, 4096)),
    ("NT", (212, 4864, 896)),
    ("NT", (71, 2304, 768)),
    ("NT", (228, 11008, 4096)),
    ("NT", (132, 1024, 4096)),
    ("NT", (122, 5120, 13824)),
    ("NT", (123, 24576, 3072)),
    ("NT", (127, 5120, 13824)),
    ("NT", (127, 256000, 2048)),
    ("NT", (105, 1024, 4096)),
    ("NN", (108, 5120, 5120)),
    ("NN", (195, 3072, 12288)),
    ("NT", (99, 1024, 4096)),
    ("NN", (67, 1024, 30522)),
    ("NT", (99, 3072, 768)),
    ("NT", (238, 30522, 1024)),
    ("NN", (87, 4096, 6144)),
    ("NT", (153, 152064, 3584)),
    ("NT", (69, 11008, 4096)),
    ("NT", (260, 50257, 768)),
    ("NN", (84, 1024, 1024)),
    ("NN", (267, 4096, 128256)),
    ("NN", (95, 18944, 3584)),
    ("NT", (193, 18944, 3584)),
    ("NN", (204, 768, 3072)),
    ("NT", (223, 1024, 1024)),
    ("NT", (208, 1024, 4096)),
    ("NT", (89, 2304, 768)),
    ("NN", (113, 1024, 4096)),
    ("NT", (182, 5120, 13824)),
    ("NT", (89, 12288, 4096)),
    ("NT", (143, 2048, 2048)),
    ("NT", (86, 1024, 1024)),
    ("NT", (122, 32000, 4096)),
    ("NT", (305, 4096, 11008)),
    ("NT", (117, 151936, 896)),
    ("NT", (221, 32000, 4096)),
    ("NT", (165, 15360, 5120)),
    ("NN", (247, 4096, 1024)),
    ("NT", (154, 3584, 3584)),
    ("NT", (94, 5120, 13824)),
    ("NN", (74, 1024, 3072)),
    ("NT", (96, 1024, 1024)),
)

#: What step 20 timed on products of 321 to 2048 rows (``bench/triton_gemm_sweep.py --tune mid``): every seen product
#: (of the random sweep, the eight held-out draws and the three 65–320-row draws) of that class, whatever its look-up
#: choice, in a shuffled order (a run cut short by its budget leaves out no one kind). None is a product of step 20's
#: draw (``TOKEN_DRAWS["mid-rows"]``), drawn before this run (a test checks it).
MID_TUNING: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("NT", (322, 13824, 5120)),
    ("NT", (498, 4096, 4096)),
    ("NN", (1075, 3072, 768)),
    ("TN", (1152, 896, 677)),
    ("NT", (577, 768, 768)),
    ("TN", (768, 3072, 10)),
    ("NN", (362, 5120, 32000)),
    ("NT", (932, 768, 3072)),
    ("NT", (793, 30522, 768)),
    ("NT", (2036, 3072, 1024)),
    ("NT", (698, 256000, 2048)),
    ("NT", (1019, 4096, 1024)),
    ("NN", (1686, 768, 3072)),
    ("TN", (768, 3072, 2710)),
    ("NT", (1354, 4864, 896)),
    ("NT", (687, 2560, 2048)),
    ("NN", (719, 1024, 30522)),
    ("NT", (1052, 1024, 1024)),
    ("TN", (896, 4864, 7503)),
    ("NN", (1239, 8192, 8192)),
    ("NT", (574, 12288, 3072)),
    ("TN", (2048, 2048, 10)),
    ("TN", (2048, 16384, 1244)),
    ("NT", (1209, 2048, 2048)),
    ("NT", (339, 768, 768)),
    ("NT", (821, 3584, 18944)),
    ("TN", (1024, 4096, 1837)),
    ("NT", (1170, 4096, 14336)),
    ("NN", (427, 4096, 4096)),
    ("NT", (1314, 1024, 4096)),
    ("TN", (1024, 1024, 373)),
    ("NT", (674, 896, 4864)),
    ("TN", (768, 768, 60)),
    ("NN", (1690, 4096, 6144)),
    ("NN", (1970, 5120, 32000)),
    ("TN", (768, 3072, 4268)),
    ("NT", (979, 768, 768)),
    ("NT", (1035, 14336, 4096)),
    ("TN", (1024, 1024, 1625)),
    ("NN", (1439, 8192, 8192)),
    ("TN", (1024, 4096, 13)),
    ("NN", (728, 2048, 16384)),
    ("TN", (2048, 2048, 2054)),
    ("NT", (914, 2048, 16384)),
    ("NN", (396, 16384, 2048)),
    ("NN", (1497, 3072, 12288)),
    ("NT", (2005, 3072, 1024)),
    ("NT", (593, 3584, 3584)),
    ("NN", (1127, 28672, 8192)),
    ("TN", (768, 3072, 59)),
    ("TN", (2048, 16384, 557)),
    ("NT", (417, 32000, 4096)),
    ("NN", (1481, 13824, 5120)),
    ("TN", (1024, 4096, 43)),
    ("TN", (1024, 4096, 879)),
    ("TN", (896, 896, 2)),
    ("TN", (1024, 1024, 531)),
    ("TN", (2048, 16384, 1726)),
)

#: What step 21 timed deeper pipelines on (``bench/triton_gemm_sweep.py --tune depth``): every seen product of 65 to 320
#: rows (step 19's, those of its 65–320-row draw and of the tenth draw), whatever its look-up choice, in a shuffled
#: order. None is a product of step 21's draw (``TOKEN_DRAWS["tokens-4"]``), drawn before this run (a test checks it).
DEPTH_TUNING: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("NT", (276, 151936, 896)),
    ("NN", (87, 4096, 6144)),
    ("NT", (209, 128256, 4096)),
    ("NN", (67, 1024, 30522)),
    ("NN", (170, 28672, 8192)),
    ("NN", (247, 4096, 1024)),
    ("NT", (146, 6144, 4096)),
    ("NN", (166, 4864, 896)),
    ("NT", (103, 768, 3072)),
    ("NT", (236, 3072, 4096)),
    ("NT", (69, 11008, 4096)),
    ("NN", (207, 1024, 30522)),
    ("NT", (89, 12288, 4096)),
    ("NN", (74, 1024, 3072)),
    ("NT", (94, 5120, 13824)),
    ("NT", (99, 1024, 4096)),
    ("NN", (297, 14336, 4096)),
    ("NT", (277, 6144, 4096)),
    ("NT", (264, 4096, 1024)),
    ("NT", (123, 24576, 3072)),
    ("NT", (105, 1024, 4096)),
    ("NT", (82, 3072, 768)),
    ("NT", (212, 4864, 896)),
    ("NN", (90, 1024, 3072)),
    ("NN", (66, 28672, 8192)),
    ("NT", (305, 4096, 11008)),
    ("NN", (161, 8192, 28672)),
    ("NT", (92, 768, 3072)),
    ("NT", (127, 5120, 13824)),
    ("NT", (180, 768, 3072)),
    ("NT", (74, 28672, 8192)),
    ("NT", (127, 256000, 2048)),
    ("NT", (115, 32000, 4096)),
    ("NN", (180, 768, 3072)),
    ("NT", (133, 8192, 28672)),
    ("NT", (67, 4864, 896)),
    ("NT", (71, 2304, 768)),
    ("NT", (113, 3072, 768)),
    ("NT", (80, 6144, 4096)),
    ("NT", (154, 151936, 896)),
    ("NT", (152, 6144, 4096)),
    ("NN", (127, 8192, 128256)),
    ("NT", (223, 1024, 1024)),
    ("NT", (228, 11008, 4096)),
    ("NN", (112, 8192, 8192)),
    ("NT", (242, 3072, 24576)),
    ("NT", (99, 3072, 768)),
    ("NT", (122, 5120, 13824)),
    ("NT", (89, 2304, 768)),
    ("NT", (261, 18944, 3584)),
    ("NT", (256, 128256, 4096)),
    ("NT", (90, 4096, 14336)),
    ("NT", (153, 152064, 3584)),
    ("NN", (187, 4096, 6144)),
    ("NT", (221, 32000, 4096)),
    ("NT", (83, 896, 896)),
    ("NT", (75, 3072, 768)),
    ("NT", (310, 3584, 18944)),
    ("NT", (86, 12288, 3072)),
    ("NN", (101, 8192, 8192)),
    ("NT", (251, 2048, 16384)),
    ("NN", (86, 4096, 32000)),
    ("NT", (310, 12288, 3072)),
    ("NT", (260, 50257, 768)),
    ("NN", (195, 3072, 12288)),
    ("NN", (70, 768, 50257)),
    ("NT", (208, 1024, 4096)),
    ("NT", (154, 3584, 3584)),
    ("NT", (126, 768, 768)),
    ("NT", (163, 12288, 3072)),
    ("NT", (185, 4096, 4096)),
    ("NN", (69, 896, 4864)),
    ("NT", (102, 8192, 28672)),
    ("NT", (67, 768, 3072)),
    ("NT", (143, 2048, 2048)),
    ("NT", (165, 15360, 5120)),
    ("NN", (108, 5120, 5120)),
    ("NT", (116, 2304, 768)),
    ("NN", (204, 768, 3072)),
    ("NT", (205, 3072, 24576)),
    ("NN", (84, 1024, 1024)),
    ("NT", (193, 18944, 3584)),
    ("NN", (127, 2048, 256000)),
    ("NT", (69, 8192, 28672)),
    ("NT", (90, 4096, 4096)),
    ("NT", (263, 3072, 24576)),
    ("NT", (127, 768, 3072)),
    ("NN", (95, 18944, 3584)),
    ("NT", (96, 1024, 1024)),
    ("NT", (238, 30522, 1024)),
    ("NT", (128, 32000, 4096)),
    ("NT", (159, 768, 3072)),
    ("NN", (318, 5120, 13824)),
    ("NT", (117, 151936, 896)),
    ("NT", (86, 1024, 1024)),
    ("NN", (174, 8192, 10240)),
    ("NT", (122, 32000, 4096)),
    ("NN", (113, 1024, 4096)),
    ("NN", (102, 896, 1152)),
    ("NT", (182, 5120, 13824)),
    ("NT", (132, 1024, 4096)),
    ("NN", (116, 1024, 4096)),
    ("NN", (124, 2048, 256000)),
    ("NT", (87, 3072, 4096)),
    ("NN", (267, 4096, 128256)),
    ("NT", (156, 6144, 4096)),
)

#: Tiny products (M·N·K < 2^20): timed against cuBLAS like the rest; their goal is within twice cuBLAS's time.
TINY_SHAPES: tuple[Shape, ...] = (
    ("tiny", "3×5×7", 3, 5, 7),
    ("tiny", "17×33×65", 17, 33, 65),
    ("tiny", "64³", 64, 64, 64),
    ("tiny", "100³", 100, 100, 100),
)


def random_shapes() -> list[tuple[str, Shape]]:
    """The random sweep (:func:`gpukb.gemm.triton.model_shapes.draw`, its fixed seed) as ``(layout, shape)`` pairs."""
    from gpukb.gemm.triton.model_shapes import draw

    return [(s.layout, ("random", s.label, s.m, s.n, s.k)) for s in draw()]


def held_out(name: str) -> list[tuple[str, Shape]]:
    """A held-out sweep (the same generator as the random sweep, with the seed and count
    :data:`~gpukb.gemm.triton.model_shapes.HELD_OUT_DRAWS` gives ``name``), as ``(layout, shape)`` pairs whose
    group is ``name``: each drawn and committed before the run that first measured it.

    Raises:
        ValueError: For a name that is not a held-out draw's (the message lists them).
    """
    from gpukb.gemm.triton.model_shapes import HELD_OUT_DRAWS, draw

    if not isinstance(name, str) or name not in HELD_OUT_DRAWS:
        raise ValueError(f"name must be one of {list(HELD_OUT_DRAWS)}; got {name!r}")
    seed, count = HELD_OUT_DRAWS[name]
    return [(s.layout, (name, s.label, s.m, s.n, s.k)) for s in draw(seed, count)]


def token_draw(name: str = "tokens") -> list[tuple[str, Shape]]:
    """A draw of one class of products (:data:`~gpukb.gemm.triton.model_shapes.TOKEN_DRAWS`,
    :func:`~gpukb.gemm.triton.model_shapes.draw_rows`; ``"tokens"``: step 16's, ``"tokens-2"``: step 18's,
    ``"tokens-3"``: step 19's, and ``"tokens-4"``: step 21's, of 65 to 320 rows; ``"mid-rows"``: step 20's, of 321 to
    2048) as ``(layout, shape)``
    pairs whose group is ``name``.

    Raises:
        ValueError: For a name that is not such a draw's (the message lists them).
    """
    from gpukb.gemm.triton.model_shapes import TOKEN_DRAWS, draw_rows

    if not isinstance(name, str) or name not in TOKEN_DRAWS:
        raise ValueError(f"name must be one of {list(TOKEN_DRAWS)}; got {name!r}")
    return [(s.layout, (name, s.label, s.m, s.n, s.k)) for s in draw_rows(*TOKEN_DRAWS[name])]


#: Operand layouts: each letter says whether A, then B, is stored as given (N) or as its transpose's row-major
#: storage viewed transposed (T): ``"NT"`` is ``x @ w.t()``, how a linear layer calls it.
LAYOUTS = ("NN", "NT", "TN", "TT")


def operands(
    torch: Any, dtype: Any, m: int, n: int, k: int, layout: str = "NN", device: str = "cuda"
) -> tuple[Any, Any]:
    """Random A (m×k) and B (k×n) in ``layout`` (:data:`LAYOUTS`), standard normal, for the bench scripts. FP8
    (``torch.float8_e4m3fn``) is drawn in bf16 and cast, as torch draws no random FP8.

    Raises:
        ValueError: For a layout not in :data:`LAYOUTS` or a dimension that is not a positive int.
        TypeError: If a dimension is a bool.
    """
    from gpukb.arguments import positive_int

    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}; got {layout!r}")
    for name, size in (("m", m), ("n", n), ("k", k)):
        positive_int(name, size)
    fp8 = dtype == torch.float8_e4m3fn
    base = torch.bfloat16 if fp8 else dtype
    a = (
        torch.randn(m, k, device=device, dtype=base)
        if layout[0] == "N"
        else torch.randn(k, m, device=device, dtype=base).t()
    )
    b = (
        torch.randn(k, n, device=device, dtype=base)
        if layout[1] == "N"
        else torch.randn(n, k, device=device, dtype=base).t()
    )
    return (a.to(dtype), b.to(dtype)) if fp8 else (a, b)


def case_label(shape: Shape) -> str:
    """``"MxNxK"``, the case label of a kernel pair."""
    return f"{shape[2]}x{shape[3]}x{shape[4]}"


# pragma: no mutate start
# GPU only (CUDA tensors, the driver's launchers): the CPU tests cannot reach it and the GPU tests do, so
# it stays out of the CPU mutation run.
def _inputs(dtype_name: str) -> Any:
    def make(case: str) -> dict[str, Any]:
        import torch

        from gpukb.gemm.triton.pairs import parse_case

        m, n, k = parse_case(case)
        fp8 = dtype_name == "float8_e4m3fn"
        base = torch.bfloat16 if fp8 else torch_dtype(dtype_name)
        a = torch.randn(m, k, device="cuda", dtype=base)
        b = torch.randn(n, k, device="cuda", dtype=base).t() if fp8 else torch.randn(k, n, device="cuda", dtype=base)
        if fp8:
            a, b = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
        out_dtype = torch.bfloat16 if fp8 else base
        return {
            "a": a,
            "b": b,
            "out": torch.full((m, n), float("nan"), device="cuda", dtype=out_dtype),
            "peer_out": torch.empty(m, n, device="cuda", dtype=out_dtype),
            "one": torch.ones((), device="cuda"),
        }

    return make


def _kernel(x: dict[str, Any]) -> Any:
    from gpukb.gemm.triton.matmul import matmul

    return matmul(x["a"], x["b"], out=x["out"])


def _matmul_peer(x: dict[str, Any]) -> Any:
    import torch

    return torch.matmul(x["a"], x["b"], out=x["peer_out"])


def _scaled_mm_peer(x: dict[str, Any]) -> Any:
    import torch

    one = x["one"]
    out = torch._scaled_mm(x["a"], x["b"], scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=False)
    return out[0] if isinstance(out, tuple) else out


def _check(out: Any, ref: Any) -> None:
    import torch

    from gpukb.numerics import relative_error

    assert bool(torch.isfinite(out).all()), "the Triton GEMM left elements of its output unwritten (NaN)"
    diff = relative_error(out, ref)
    assert diff < 2e-2, f"the Triton GEMM differs from its peer by {diff:.3g} (relative Frobenius norm)"


# pragma: no mutate end
def pairs() -> list[Any]:
    """The sweep's kernel pairs, one per input type (not yet registered)."""
    from gpukb.gemm.triton.pairs import parse_case
    from gpukb.measuring.counting import gemm_bytes, gemm_flops
    from gpukb.measuring.pairs import KernelPair

    out = []
    for name, dtype, chosen, peer, reference, size in (
        ("bf16", "bfloat16", shapes(), "torch.matmul (cuBLAS)", _matmul_peer, 2),
        ("fp16", "float16", fp16_shapes(), "torch.matmul (cuBLAS)", _matmul_peer, 2),
        ("fp8", "float8_e4m3fn", fp8_shapes(), "torch._scaled_mm (use_fast_accum=False)", _scaled_mm_peer, 1),
    ):
        out.append(
            KernelPair(
                name=f"triton-gemm-sweep-{name}",
                peer=peer,
                cases=tuple(dict.fromkeys(case_label(s) for s in chosen)),
                make_inputs=_inputs(dtype),
                kernel=_kernel,
                reference=reference,
                flops=lambda case: gemm_flops(*parse_case(case)),
                nbytes=lambda case, size=size: gemm_bytes(*parse_case(case), a_bytes=size, c_bytes=2),
                check=_check,
            )
        )
    return out

"""The Triton GEMM across shapes: tune a table by shape class, then sweep shapes against cuBLAS, in one run.

Run from the repository root on a machine with a Hopper GPU::

    python bench/triton_gemm_sweep.py OUT_DIR [--budget SECONDS]
        [--tune sweep|issue29|losers|gaps|fill|streamk|twoblock|tokens|default|tokensplit|swap|mid|depth|none]
        [--tune-only] [--reserve SECONDS] [--bytes-rules]
        [--sets first,issue,random,held-out,held-out-2,held-out-3,held-out-4,held-out-5,held-out-6,
        held-out-7,held-out-8,held-out-9,tokens,tokens-2,tokens-3,mid-rows,tokens-4,tiny] [--without-two-block]
        [--without-tokens] [--without-many-rounds] [--without-token-split] [--without-swap] [--without-mid]
        [--without-deep]
        [--profile some|all]

``--tune issue29`` tunes the classes of issue 29's representatives (``gpukb.gemm.triton.sweep.ISSUE_TUNING``) with
the extended candidates and writes ``triton-gemm-tuning-h100-issue29.json``; ``--tune losers`` the classes of the
random sweep's products and the first sweep's slowest (``gpukb.gemm.triton.sweep.LOSER_TUNING``) with those and the
split-tail and decode candidates, writing ``triton-gemm-tuning-h100-losers.json``; ``--tune gaps`` and ``--tune fill``
the shapes designed for them (``sweep.GAP_TUNING``, ``sweep.FILL_TUNING``: 16-row, one-launch split-K and transposed
decode tilings), writing ``-gaps`` and ``-fill`` tables, each measured over the committed ones; ``--tune streamk``,
``--tune twoblock``, ``--tune tokens``, ``--tune default``, ``--tune tokensplit``, ``--tune swap``, ``--tune mid`` and
``--tune depth`` time seen products (``sweep.STREAMK_TUNING``, ``sweep.TWO_BLOCK_TUNING``, ``sweep.TOKEN_TUNING``,
``sweep.DEFAULT_TUNING``, ``sweep.TOKEN_SPLIT_TUNING``, ``sweep.SWAP_TUNING``, ``sweep.MID_TUNING``,
``sweep.DEPTH_TUNING``) with the look-up's own choice first, then step 12's stream-K candidates, step 14's tiles of two
blocks, step 16's tall tiles (with the names of cuBLAS's kernels), step 17's default tilings, step 18's split-K
tilings, step 19's swapped tiles, step 20's ways to fill a part-empty round or step 21's deeper pipelines (the last
four with cuBLAS's kernels), and change no table; every
candidate's output is compared with cuBLAS's before and after it is timed, and a wrong one is never chosen;
``--tune none`` tunes nothing and uses the committed tables (``tuning.TABLE_RECORDS``). ``--reserve``: the seconds
the tuning leaves for the sweep. The sweep then measures the sets of shapes it is given
(``--sets``), each row marked with its ``sweep``: ``first`` (the page's sweep: bf16, fp16, FP8), ``issue`` (the
products issue 29 reported), ``random`` (the seeded draw of ``gpukb.gemm.triton.model_shapes``, bf16 and fp16),
``held-out`` (a second draw, committed before the third tuning and measured only after it), ``held-out-2`` (a third
draw, committed after the fourth tuning and before the run that measured it), ``held-out-3`` (a fourth draw,
committed after the look-up's rules changed and before the run that measured it), ``held-out-4`` (a fifth draw,
committed before the fifth tuning, ``--tune fill``, and measured in the run after it), ``held-out-5`` (a sixth draw,
committed after the look-up's step-11 rules and before the run that measured it), ``held-out-6`` (a seventh,
committed after the look-up's step-15 rule and before the run that measured it), ``held-out-7`` (an eighth, committed
before step 16's run and before the run that measured it), ``held-out-8`` (a ninth, committed before step 17's run and
before the run that measured it), ``held-out-9`` (a tenth, committed after step 20's rule and before the run that
measured it), ``tokens`` (step 16's draw of products of 65 to 320 rows,
committed after its rule and before the run that measured it), ``tokens-2`` (step 18's, the same way), ``tokens-3``
(step 19's, committed before its tuning run), ``mid-rows`` (step 20's draw of products of 321 to 2048 rows, committed
before its tuning run), ``tokens-4`` (step 21's draw of products of 65 to 320 rows, committed before its tuning run) and
``tiny`` (M·N·K < 2^20).

It writes, through ``gpukb.records``:

* ``OUT_DIR/triton-gemm-tuning-h100.json`` (kind ``gemm.triton-tuning``): for each shape class of the sweep's
  shapes (input type, layout, buckets of M, N and K: ``gpukb.gemm.triton.tuning``), every candidate timed on one
  representative shape of the class, and the fastest; committed as ``gemm/triton-gemm-tuning-h100``.
* ``OUT_DIR/triton-gemm-sweep-h100.json`` (kind ``gemm.triton-gemm-sweep``): with that table in use,
  ``matmul``'s default path on every shape against ``torch.matmul`` (cuBLAS) or, for FP8,
  ``torch._scaled_mm(use_fast_accum=False)``, in the same process; the error of both against a float64
  product on sampled rows; the host time of back-to-back calls of a tiny product; layout checks.

Timing: the project's timer (``gpukb.measuring.timing.benchmark`` with a held ``EventTimer``: CUDA events around
each call, the samples queued behind a spin kernel so that a slow host path is never timed as the GPU's, the L2
flushed by a read before every call), medians, after 30 ms of the kernel back to back (the GPU idles while a shape
compiles and is checked), three rounds, kernel first, peer first, kernel first, the ratio from the median of each
side's three round medians. Records before the held timer timed with ``triton.testing.do_bench``, whose events also
timed the host whenever its path outlasted the flush before the call (``bench/triton_gemm_rounds.py`` shows it).
Each row also keeps the host's time to queue one sample of each side (``kernel_host_us``, ``peer_host_us``).
Inputs: ``torch.randn`` (standard normal), fresh per shape; outputs poisoned with NaN first. Partial results are
written after every case (``OUT_DIR/partial-*.json``), so a run stopped by its time limit still leaves what it
measured.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

try:
    import gpukb  # noqa: F401
except ImportError:  # a checkout on a machine where gpukb is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

#: Rows of C sampled for the errors against float64.
ERROR_ROWS = 64
#: Warm-up and timed milliseconds of one round (short: the sweep is long and the GPU time scarce), and the bounds on
#: the timed samples of a round.
WARMUP_MS, REP_MS = 0.5, 10
TUNE_WARMUP_MS, TUNE_REP_MS = 0.5, 6
MIN_REPS, MAX_REPS = 10, 50
#: The run's skeleton (set by ``triton_gemm_sweep``): its held event timer and its L2 flush time every call.
_SCRIPT: Script | None = None
#: The tuning table's file name (committed as the record ``gemm/triton-gemm-tuning-h100``).
TABLE_FILE = "triton-gemm-tuning-h100.json"
#: Seconds the tuning leaves for the sweep.
SWEEP_RESERVE_S = 150
#: The tiny products of the host-path measurement (64³; 3×5×7, whose rows are not even 16-byte aligned), and how
#: many back-to-back calls.
HOST_SHAPES, HOST_CALLS = ((64, 64, 64), (3, 5, 7)), 1000

# The shapes live with the kernel (gpukb.gemm.triton.sweep), where `gpukb bench` finds them too.
from gpukb.arguments import given, text  # noqa: E402
from gpukb.dtypes import torch_dtype  # noqa: E402
from gpukb.gemm.triton.model_shapes import HELD_OUT_DRAWS, TOKEN_DRAWS  # noqa: E402
from gpukb.gemm.triton.sweep import (  # noqa: E402
    DEFAULT_TUNING,
    DEPTH_TUNING,
    FILL_TUNING,
    GAP_TUNING,
    ISSUE_SHAPES,
    ISSUE_TUNING,
    LOSER_TUNING,
    MID_TUNING,
    STREAMK_TUNING,
    SWAP_TUNING,
    TINY_SHAPES,
    TOKEN_SPLIT_TUNING,
    TOKEN_TUNING,
    TWO_BLOCK_TUNING,
    fp8_shapes,
    fp16_shapes,
    held_out,
    operands,
    random_shapes,
    shapes,
    token_draw,
)
from gpukb.gemm.triton.sweep import NT_SHAPES as NT_CASES  # noqa: E402
from gpukb.measuring.timing import EventTimer  # noqa: E402
from gpukb.records.script import Script, main  # noqa: E402


class Budget:
    """Seconds left before the run's own deadline (phases skip what would not fit)."""

    def __init__(self, seconds: float):
        self.end = time.perf_counter() + seconds

    def left(self) -> float:
        return self.end - time.perf_counter()


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"[:300]


def _bench(fn: Any, warmup: float, rep: float, host: list[float] | None = None) -> float:
    """One round: the project's timer (``gpukb.measuring.timing.benchmark``: CUDA events, the samples held behind a
    gate, the L2 flushed by a read before each) for about ``rep`` ms after ``warmup`` ms; the median in ms. The host's
    time to queue one sample (flush, two events and the call), in µs, is appended to ``host``."""
    from gpukb.measuring.timing import Budget, benchmark

    assert _SCRIPT is not None, "the sweep's functions run inside triton_gemm_sweep(script)"
    budget = Budget(warmup_ms=warmup, rep_ms=rep, min_reps=MIN_REPS, max_reps=MAX_REPS, min_warmup=2)
    measured = benchmark(fn, _SCRIPT.timer(), budget, _SCRIPT.flush)
    if host is not None and measured.host_ms:
        host.append(statistics.median(measured.host_ms) * 1e3)
    return float(statistics.median(measured.samples))


def _tflops(m: int, n: int, k: int, ms: float | None) -> float | None:
    return None if not ms else 2 * m * n * k / (ms * 1e-3) / 1e12


#: bf16 products with M up to this (and the K-heavy ones) get the names of the GPU kernels each side launched
#: (``--profile some``; ``--profile all``: every bf16 product, in its own layout).
PROFILE_MAX_M = 64


def _kernel_names(torch: Any, fn: Any) -> list[str] | None:
    """The CUDA kernels one call of ``fn`` launches, by name, in launch order (``None`` where profiling fails)."""
    try:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        names = [e.name for e in prof.events() if e.device_type.name == "CUDA"]
        return [name[:160] for name in dict.fromkeys(names)]
    except Exception:
        return None


def _write_scratch(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def _aligned(torch: Any, dtype: str, layout: str, m: int, n: int, k: int, line: int = 128) -> bool:
    """Whether the sweep's operands of this shape have 128-byte-aligned rows (the tuning class's ``aligned``;
    ``line=32``: its ``sectors``)."""
    from gpukb.gemm.triton.matmul import rows_aligned

    meta = torch.device("meta")
    a = torch.empty((m, k) if layout[0] == "N" else (k, m), device=meta, dtype=torch_dtype(dtype))
    b = torch.empty((k, n) if layout[1] == "N" else (n, k), device=meta, dtype=torch_dtype(dtype))
    c = torch.empty((m, n), device=meta, dtype=torch.bfloat16 if dtype == "float8_e4m3fn" else torch_dtype(dtype))
    return rows_aligned(a if layout[0] == "N" else a.t(), b if layout[1] == "N" else b.t(), c, line)


class ProductMode(NamedTuple):
    """A tuning mode that times seen products against the look-up's own choice and changes no table.

    Attributes:
        products: The ``(layout, shape)`` pairs it times (bf16).
        trials: What it times on one product: ``trials(chosen, m, n, k, sms)``, the look-up's choice first.
        every: Every product, not the first of each shape class.
        kernels: Also record which kernels cuBLAS ran (their names, from the profiler).
        what: The products and trials, in words, for the record's ``timing``.
    """

    products: tuple
    trials: Any
    every: bool
    kernels: bool
    what: str


def _by_product_modes() -> dict[str, ProductMode]:
    from gpukb.gemm.triton import tuning

    return {
        "streamk": ProductMode(
            STREAMK_TUNING,
            lambda chosen, m, n, k, sms: tuning.streamk_trials(chosen),
            False,
            False,
            "gpukb.gemm.triton.sweep.STREAMK_TUNING: products with a part-full last round, all seen, and two guards "
            "level with cuBLAS; tuning.CANDIDATES_16_STREAMK, each tiling with and without one stream-K round",
        ),
        "twoblock": ProductMode(
            TWO_BLOCK_TUNING,
            lambda chosen, m, n, k, sms: tuning.two_block_trials(chosen),
            False,
            False,
            "gpukb.gemm.triton.sweep.TWO_BLOCK_TUNING: products where cuBLAS ran tiles that are not powers of two, all "
            "seen, and guards level with cuBLAS; tuning.CANDIDATES_16_TWO_BLOCK: tilings of one block with their "
            "loops flattened and not, and tiles of two blocks on a side",
        ),
        "tokens": ProductMode(
            TOKEN_TUNING,
            lambda chosen, m, n, k, sms: tuning.token_trials(chosen, m),
            False,
            True,
            "gpukb.gemm.triton.sweep.TOKEN_TUNING: products of 65 to 320 rows, all seen; tuning.CANDIDATES_16_TOKENS "
            "and tuning.token_tiles: tiles as tall as all the rows or half of them",
        ),
        "default": ProductMode(
            DEFAULT_TUNING,
            lambda chosen, m, n, k, sms: tuning.default_trials(chosen),
            True,
            False,
            "gpukb.gemm.triton.sweep.DEFAULT_TUNING: every seen product of more than 320 rows and at least 2^30 "
            "multiply-adds whose look-up choice is not the default tiling; tuning.CANDIDATES_16_DEFAULT",
        ),
        "tokensplit": ProductMode(
            TOKEN_SPLIT_TUNING,
            tuning.token_split_trials,
            True,
            True,
            "gpukb.gemm.triton.sweep.TOKEN_SPLIT_TUNING: every seen product of 65 to 320 rows whose look-up choice is "
            "the split-K kernel; tuning.token_split_trials",
        ),
        "swap": ProductMode(
            SWAP_TUNING,
            lambda chosen, m, n, k, sms: tuning.swap_trials(chosen, m),
            True,
            True,
            "gpukb.gemm.triton.sweep.SWAP_TUNING: every seen product of 65 to 320 rows; tuning.swap_tiles: tiles "
            "computed as their transposes, the tokens along the MMA's N",
        ),
        "mid": ProductMode(
            MID_TUNING,
            lambda chosen, m, n, k, sms: tuning.mid_trials(chosen),
            True,
            True,
            "gpukb.gemm.triton.sweep.MID_TUNING: every seen product of 321 to 2048 rows; tuning.CANDIDATES_16_MID: "
            "tilings of one block and two, split-K and a stream-K round",
        ),
        "depth": ProductMode(
            DEPTH_TUNING,
            lambda chosen, m, n, k, sms: tuning.depth_trials(chosen, m),
            True,
            True,
            "gpukb.gemm.triton.sweep.DEPTH_TUNING: every seen product of 65 to 320 rows; tuning.depth_trials: the "
            "look-up's choice and swapped tiles 64 and 128 wide, each at its depth and at the deepest pipeline "
            "that fits",
        ),
    }


def tune(torch: Any, out_dir: Path, budget: Budget, mode: str = "sweep", reserve: float = SWEEP_RESERVE_S) -> dict:
    """Time every candidate of each shape class on the class's first shape; keep the fastest. ``mode``
    ``"sweep"``: the classes of the sweep's shapes; ``"issue29"``: those of ``ISSUE_TUNING``, with the extended
    candidates (``tuning.candidates(..., extended=True)``); a mode of :func:`_by_product_modes`: its products against
    the look-up's own choice."""
    from gpukb.gemm.triton import tuning
    from gpukb.gemm.triton.configs import split_for, tail_rows
    from gpukb.gemm.triton.matmul import _sm_count, clear_plans, default_config, layout_code, matmul, rows_aligned

    sms = _sm_count(torch.device("cuda"))
    extended, losers, gaps, fill = mode == "issue29", mode == "losers", mode == "gaps", mode == "fill"
    product_mode = _by_product_modes().get(mode)
    by_product = product_mode is not None  # products timed against the look-up's choice, not classes tuned
    work: list[tuple[str, str, tuple[int, int, int]]] = []
    seen = set()
    if by_product:  # against the look-up as it is: the committed tables (the run cleared them for the host path)
        tuning._ACTIVE.clear()
        clear_plans()
    if product_mode is not None:
        sources = [("bfloat16", layout, shape) for layout, shape in product_mode.products]
    elif extended or losers or gaps or fill:
        chosen = ISSUE_TUNING if extended else LOSER_TUNING if losers else GAP_TUNING if gaps else FILL_TUNING
        sources = [("bfloat16", layout, shape) for layout, shape in chosen]
    else:
        sources = [("bfloat16", "NN", s[2:]) for s in shapes()]
        sources += [("float8_e4m3fn", "NT", s[2:]) for s in fp8_shapes()]
    for dtype, layout, (m, n, k) in sources:
        cls = tuning.ShapeClass.of(
            dtype, layout, m, n, k, _aligned(torch, dtype, layout, m, n, k), _aligned(torch, dtype, layout, m, n, k, 32)
        )
        key = (dtype, layout, (m, n, k)) if product_mode is not None and product_mode.every else cls
        if key not in seen:
            seen.add(key)
            work.append((dtype, layout, (m, n, k)))
    classes = []
    partial = out_dir / "partial-tuning.json"
    for dtype, layout, (m, n, k) in work:
        if budget.left() < reserve:
            print(f"tune: stopping, {budget.left():.0f} s left", flush=True)
            break
        tdtype = torch_dtype(dtype)
        a, b = operands(torch, tdtype, m, n, k, layout)
        assert layout_code(a, b) == layout
        out_dtype = torch.bfloat16 if dtype == "float8_e4m3fn" else tdtype
        c = torch.empty(m, n, device="cuda", dtype=out_dtype)
        aligned = rows_aligned(a, b, c)
        if product_mode is not None:  # the look-up's choice first, then the mode's trials
            pool = product_mode.trials(default_config(a, b, c), m, n, k, sms)
        else:
            pool = tuning.trials(
                dtype, m, n, k, sms, aligned=aligned, extended=extended, losers=losers, gaps=gaps, fill=fill
            )
        trials = [{"config": cfg.as_dict(), "split_k": None, "ms": None, "error": None} for cfg in pool]
        expected = torch.matmul(a, b) if dtype != "float8_e4m3fn" else None
        for config, trial in zip(pool, trials, strict=True):  # compile and check every candidate first
            try:
                if config.kernel == "splitk":
                    trial["split_k"] = split_for(m, n, k, config, sms)
                elif config.split_tail:
                    trial["split_k"] = tail_rows(m, n, k, config, sms)[1]
                c.fill_(math.nan)
                matmul(a, b, out=c, config=config)
                trial["error"] = _wrong(torch, c, expected)
            except Exception as err:  # a candidate that does not compile or fit is recorded, not fatal
                trial["error"] = _first_line(err)
        if dtype == "float8_e4m3fn":
            one = torch.ones((), device="cuda")
            peer = lambda a=a, b=b, one=one: torch._scaled_mm(  # noqa: E731
                a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16
            )
        else:
            peer = lambda a=a, b=b, c=c: torch.matmul(a, b, out=c)  # noqa: E731
        _keep_busy(torch, peer, 0.03)  # compiling left the GPU idle: bring its clock up before timing
        peer_ms = [_bench(peer, TUNE_WARMUP_MS, TUNE_REP_MS)] if by_product else []  # cuBLAS before the passes too
        for order in (list(zip(pool, trials, strict=True)), list(zip(pool, trials, strict=True))[::-1]):
            for config, trial in order:  # two passes, the second in reverse order; the faster median kept
                if trial["error"] is not None:
                    continue
                run = lambda a=a, b=b, c=c, cfg=config: matmul(a, b, out=c, config=cfg)  # noqa: E731
                ms = _bench(run, TUNE_WARMUP_MS, TUNE_REP_MS)
                trial["ms"] = ms if trial["ms"] is None else min(trial["ms"], ms)
        for config, trial in zip(pool, trials, strict=True):  # again after the timed calls (the plans' kept buffers)
            if trial["ms"] is not None:
                c.fill_(math.nan)
                matmul(a, b, out=c, config=config)
                wrong = _wrong(torch, c, expected)
                if wrong is not None:
                    trial["error"], trial["ms"] = f"after timing: {wrong}", None
        try:
            cublas_ms: float | None = min([*peer_ms, _bench(peer, TUNE_WARMUP_MS, TUNE_REP_MS)])
        except Exception:
            cublas_ms = None
        timed = [t for t in trials if t["ms"] is not None]
        if not timed:
            print(f"tune {dtype} {layout} {m}x{n}x{k}: no candidate ran", flush=True)
            continue
        best = min(timed, key=lambda t: t["ms"])
        cls = tuning.ShapeClass.of(dtype, layout, m, n, k, aligned)
        entry = {
            "dtype": dtype, "layout": layout, "m_bucket": cls.m, "n_bucket": cls.n, "k_bucket": cls.k,
            "aligned": cls.aligned, "tiny": cls.tiny, "shape": [m, n, k], "config": best["config"], "trials": trials,
            "cublas_ms": cublas_ms,
        }  # fmt: skip
        if product_mode is not None and product_mode.kernels:  # which tiles cuBLAS chose (its kernels' names)
            entry["cublas_kernels"] = _kernel_names(torch, peer)
            print(f"   cuBLAS ran {entry['cublas_kernels']}", flush=True)
        classes.append(entry)
        for trial in sorted(timed, key=lambda t: t["ms"]):
            print(f"   {tuning.Config(**trial['config']).label}: {trial['ms']:.4f} ms", flush=True)
        label = tuning.Config(**best["config"]).label
        print(f"tune {dtype} {layout} {m}x{n}x{k}: {label} {best['ms']:.4f} ms (peer {cublas_ms or math.nan:.4f})",
              flush=True)  # fmt: skip
        _write_scratch(partial, classes)
    clear_plans()
    return {
        "kind": tuning.GemmTuning.kind_name(),
        "schema_version": tuning.GemmTuning.version(),
        "edges": {"m": list(tuning.M_EDGES), "n": list(tuning.N_EDGES), "k": list(tuning.K_EDGES)},
        "timing": f"gpukb.measuring.timing.benchmark (CUDA events, samples held behind a gate, {TUNE_WARMUP_MS} ms "
        f"of warm-up, {TUNE_REP_MS} ms timed, {MIN_REPS} to {MAX_REPS} samples), median; "
        "L2 flushed by a read before every call; every candidate compiled first, the GPU then kept busy for 30 ms, "
        "two passes over the candidates (the second in reverse order), the faster median kept; one representative "
        "shape per "
        + (
            "class (issue 29's products and gpukb.gemm.triton.sweep.ISSUE_TUNING; extended candidates)"
            if extended
            else "class (gpukb.gemm.triton.sweep.LOSER_TUNING: the random sweep and the first sweep's slowest; "
            "extended, split-tail and decode candidates)"
            if losers
            else "class (gpukb.gemm.triton.sweep.GAP_TUNING: shapes designed for the classes the earlier tables left "
            "empty; extended, split-tail, decode and gap candidates)"
            if gaps
            else "class (gpukb.gemm.triton.sweep.FILL_TUNING: shapes designed for the decode classes and for three "
            "classes of under-filled waves; the earlier 64-row decode candidates and the fill candidates for M <= 64, "
            "the gap candidates and the fill candidates above)"
            if fill
            else f"product ({product_mode.what}; the look-up's choice with the committed tables first; every output "
            "checked into a NaN-filled C before timing and again after; cuBLAS timed before the two passes and after, "
            "the faster kept" + (", and its kernels' names taken from the profiler)" if product_mode.kernels else ")")
            if product_mode is not None
            else "class (the first sweep shape in it)"
        ),
        "classes": classes,
    }


#: A tuning candidate whose output differs from cuBLAS's by more than this (relative Frobenius norm) is recorded as
#: wrong and never chosen: a 16-bit product rounded once differs by about 2^-8 at most.
WRONG = 1e-2


def _wrong(torch: Any, out: Any, expected: Any) -> str | None:
    """Why a candidate's output is wrong (unwritten elements, or farther than :data:`WRONG` from ``expected``), or
    ``None`` (also where there is nothing to compare with)."""
    from gpukb.numerics import relative_error

    torch.cuda.synchronize()
    if expected is None:
        return None
    if not bool(torch.isfinite(out).all()):
        return "wrong result: elements left unwritten (NaN)"
    diff = relative_error(out, expected)
    return None if diff <= WRONG else f"wrong result: {diff:.3g} from cuBLAS's (relative Frobenius norm)"


def _keep_busy(torch: Any, fn: Any, seconds: float) -> None:
    """Run ``fn`` back to back for about ``seconds`` (the GPU raises its clock under load)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(10):
            fn()
        torch.cuda.synchronize()


def host_notes(torch: Any, fn: Any) -> list[str]:
    """How the plans launch (directly or through Triton's JIT, and why not directly), the host time of the
    parts of a call, and the top of a profile of 300 calls: for the log and the record."""
    import cProfile
    import io
    import pstats

    from gpukb.gemm.triton import matmul as mm

    notes = []
    for plan in mm._PLANS.values():
        direct = plan.direct or []
        kinds = ["none" if d is None else ("tensor maps kept" if d.raw is not None else "launcher") for d in direct]
        notes.append(f"plan {plan.config.label}: direct launch {kinds}, failed: {plan.fast_failed}")
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(300):
        fn()
    profiler.disable()
    torch.cuda.synchronize()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(12)
    notes += [line for line in text.getvalue().splitlines() if line.strip()][:24]
    return notes


def host_path(torch: Any, shape: tuple[int, int, int] = HOST_SHAPES[0]) -> dict:
    """Wall time of back-to-back calls of a tiny product (plan already made), and the device time of one."""
    from gpukb.gemm.triton.matmul import matmul

    m, n, k = shape
    a, b = operands(torch, torch.bfloat16, m, n, k, "NN")
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    calls = {
        "matmul(a, b, out=c)": lambda: matmul(a, b, out=c),
        "matmul(a, b)": lambda: matmul(a, b),
        "torch.matmul(a, b, out=c) (cuBLAS)": lambda: torch.matmul(a, b, out=c),
    }
    rows = []
    for what, fn in calls.items():
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            fn()
            with torch.cuda.graph(graph):
                for _ in range(100):
                    fn()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        graph.replay()
        kernel_us = EventTimer(torch, calls_per_sample=5).time(graph.replay, 1)[0] * 1e3 / 100  # 5 replays of 100 calls
        best = None
        for _ in range(3):  # three rounds, the fastest kept (the others met a busy host)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(HOST_CALLS):
                fn()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            wall, enqueue = (t2 - t0) / HOST_CALLS * 1e6, (t1 - t0) / HOST_CALLS * 1e6
            if best is None or wall < best[0]:
                best = (wall, enqueue)
        assert best is not None
        rows.append({"what": what, "wall_us": round(best[0], 3), "enqueue_us": round(best[1], 3),
                     "kernel_us": round(kernel_us, 3), "host_us": round(best[0] - kernel_us, 3)})  # fmt: skip
        print(f"host: {rows[-1]}", flush=True)
    notes = host_notes(torch, calls["matmul(a, b, out=c)"])
    print("\n".join(notes), flush=True)
    return {"shape": list(shape), "dtype": "bfloat16", "calls": HOST_CALLS, "rows": rows, "notes": notes}


def _errors(torch: Any, out: Any, a: Any, b: Any, rows: Any, alpha: float = 1.0) -> tuple[float, float]:
    from gpukb.numerics import relative_error

    ref = alpha * (a[rows].double() @ b.double())
    return relative_error(out[rows], ref), relative_error(ref.to(out.dtype), ref)


def layout_checks(torch: Any) -> list[dict]:
    """Products in every layout, strided views, unaligned strides and outputs, into NaN-poisoned outputs."""
    from gpukb.gemm.triton.matmul import default_config, matmul, staging

    gen = torch.Generator(device="cuda").manual_seed(1)
    checks = []
    bf = torch.bfloat16

    def rnd(*shape: int, dtype: Any = bf) -> Any:
        return torch.randn(*shape, device="cuda", generator=gen).to(dtype)

    def nan_out(rows: int, cols: int, dtype: Any) -> Any:
        return torch.full((rows, cols), math.nan, device="cuda", dtype=dtype)

    cases = [
        ("NN 999×1064×776", bf, lambda: (rnd(999, 776), rnd(776, 1064), None)),
        ("NT 1000×1064×776", bf, lambda: (rnd(1000, 776), rnd(1064, 776).t(), None)),
        ("TN 1000×1064×776", bf, lambda: (rnd(776, 1000).t(), rnd(776, 1064), None)),
        ("TT 1000×1064×776", bf, lambda: (rnd(776, 1000).t(), rnd(1064, 776).t(), None)),
        ("A a strided view (column stride 2)", torch.float16,
         lambda: (rnd(513, 1400, dtype=torch.float16)[:, ::2], rnd(700, 333, dtype=torch.float16), None)),
        ("unaligned rows 1001×1003×1005", bf, lambda: (rnd(1001, 1005), rnd(1005, 1003), None)),
        ("unaligned out= (a column slice)", bf,
         lambda: (rnd(512, 1024), rnd(1024, 1000), nan_out(512, 1003, bf)[:, :1000])),
        ("M=1 (a row vector) 1×4096×4096", bf, lambda: (rnd(1, 4096), rnd(4096, 4096), None)),
        ("fp8 with B row-major (copied K-major)", torch.float8_e4m3fn,
         lambda: (rnd(1000, 1536, dtype=torch.float8_e4m3fn), rnd(1536, 1024, dtype=torch.float8_e4m3fn), None)),
        ("fp8 NT 64×14336×4096 (small M)", torch.float8_e4m3fn,
         lambda: (rnd(64, 4096, dtype=torch.float8_e4m3fn), rnd(14336, 4096, dtype=torch.float8_e4m3fn).t(), None)),
    ]  # fmt: skip
    for what, dtype, make in cases:
        entry: dict = {"what": what, "dtype": str(dtype).removeprefix("torch."), "config": None, "staged": [],
                       "all_written": None, "rel_error": None, "peer_rel_error": None, "error": None}  # fmt: skip
        try:
            a, b, out = make()
            m, k = a.shape
            n = b.shape[1]
            entry["shape"] = [m, n, k]
            out_dtype = bf if dtype == torch.float8_e4m3fn else dtype
            if out is None:
                out = torch.full((m, n), math.nan, device="cuda", dtype=out_dtype)
            config = default_config(a, b, out)
            entry["config"] = config.as_dict()
            entry["staged"] = [name for name, why in staging(a, b, out, config).items() if why]
            matmul(a, b, out=out)
            torch.cuda.synchronize()
            entry["all_written"] = bool(torch.isfinite(out).all())
            rows = torch.arange(0, m, max(1, m // ERROR_ROWS), device="cuda")[:ERROR_ROWS]
            entry["rel_error"], _ = _errors(torch, out, a, b, rows)
            if dtype == torch.float8_e4m3fn:
                one = torch.ones((), device="cuda")
                bk = b if b.stride(0) == 1 else b.t().contiguous().t()
                peer = torch._scaled_mm(a, bk, scale_a=one, scale_b=one, out_dtype=bf)
            else:
                peer = torch.matmul(a, b)
            entry["peer_rel_error"], _ = _errors(torch, peer, a, b, rows)
        except Exception as err:
            entry["error"] = _first_line(err)
            entry.setdefault("shape", [1, 1, 1])
        print(f"check {what}: {entry}", flush=True)
        checks.append(entry)
    return checks


#: The sets of shapes a run may measure (``--sets``), in the order it measures them.
SETS = ("first", "issue", "random", *HELD_OUT_DRAWS, *TOKEN_DRAWS, "tiny")


#: The drawn sets (``--held-out-commit`` names the commit that fixed each): the held-out draws, then the class draws
#: (``TOKEN_DRAWS``: step 16's ``tokens``, step 18's ``tokens-2``, step 19's ``tokens-3``, step 20's ``mid-rows``,
#: step 21's ``tokens-4``), each as the record describes it.
DRAWS = {
    **{name: f"seed {seed}, {count} products" for name, (seed, count) in HELD_OUT_DRAWS.items()},
    **{
        name: f"seed {seed}, {count} products with M from {low} to {high}"
        for name, (seed, count, (low, high)) in TOKEN_DRAWS.items()
    },
}


def held_out_text(sets: tuple[str, ...], commits: str | None) -> str | None:
    """The sweep record's ``held_out``: each drawn set of ``sets`` (:data:`DRAWS`) with the commit that fixed it, from
    ``commits`` (``--held-out-commit``: comma-separated ``set=commit`` pairs, such as
    ``held-out-8=22ca648...,tokens=e7296da...``; a set without one is ``unknown``); ``None`` where ``sets`` holds no
    drawn set. By name, not by position: a list by position would name other sets once a draw is added.

    Raises:
        TypeError: For ``sets`` that is not a tuple or list (a string), or ``commits`` that is neither a string nor
            ``None``.
        ValueError: For a pair that is not ``set=commit`` with a commit of 1 to 40 hex digits (a space, a ';' or an
            '=' would be written into the record), a set :data:`DRAWS` does not have, or a set named twice.
    """
    if not isinstance(sets, tuple | list):  # a string: `in` would find "held-out" in "held-out-8"
        raise TypeError(f"sets must be a tuple of set names; got {given(sets)}")
    named: dict[str, str] = {}
    for pair in filter(None, ("" if commits is None else text("--held-out-commit", commits)).split(",")):
        name, sep, commit = pair.partition("=")
        if not sep or not re.fullmatch(r"[0-9a-f]{1,40}", commit) or name not in DRAWS or name in named:
            raise ValueError(
                f"--held-out-commit must be comma-separated set=commit pairs, each set once, of {','.join(DRAWS)}, "
                f"each commit 1 to 40 hex digits; got {pair!r} in {commits!r}"
            )
        named[name] = commit
    texts = [f"{DRAWS[name]}, fixed by commit {named.get(name) or 'unknown'}" for name in DRAWS if name in sets]
    return "; ".join(texts) or None


def sweep_cases(sets: tuple[str, ...] = SETS) -> list[tuple[str, str, str, tuple]]:
    """Every case of the run as ``(sweep, dtype, layout, shape)``: the page's first sweep (bf16, fp16, FP8), the
    issue's products, the random sweep, the held-out sweeps and the tiny products (bf16 and fp16 each), of ``sets``,
    in the order ``sets`` names them (a run stopped by its budget has measured the first).

    Raises:
        TypeError: For ``sets`` that is not a tuple or list (a string).
        ValueError: For a set :data:`SETS` does not have.
    """
    if not isinstance(sets, tuple | list):  # a string: `in` would find "tokens" in "tokens-2"
        raise TypeError(f"sets must be a tuple of set names; got {given(sets)}")
    unknown = [name for name in sets if name not in SETS]
    if unknown:
        raise ValueError(f"sets must name sets of {list(SETS)}; got {unknown}")
    cases = [("first", "bfloat16", "NN", s) for s in shapes()] + [("first", "bfloat16", "NT", s) for s in NT_CASES]
    cases += [("first", "float8_e4m3fn", "NT", s) for s in fp8_shapes()]
    cases += [("first", "float16", "NN", s) for s in fp16_shapes()]
    for dtype in ("bfloat16", "float16"):
        cases += [("issue", dtype, layout, s) for layout, s in ISSUE_SHAPES]
        cases += [("random", dtype, layout, s) for layout, s in random_shapes()]
        for name in HELD_OUT_DRAWS:
            cases += [(name, dtype, layout, s) for layout, s in held_out(name)]
        for name in TOKEN_DRAWS:
            cases += [(name, dtype, layout, s) for layout, s in token_draw(name)]
        cases += [("tiny", dtype, "NN", s) for s in TINY_SHAPES]
    return sorted((case for case in cases if case[0] in sets), key=lambda case: sets.index(case[0]))  # sets' order


def sweep(torch: Any, out_dir: Path, budget: Budget, tuned_shapes: set, sets: tuple[str, ...] = SETS) -> list[dict]:
    """``matmul``'s default path on every shape against its peer, with errors against float64 on sampled rows."""
    from gpukb.gemm.triton.configs import split_for, tail_rows
    from gpukb.gemm.triton.matmul import _sm_count, default_config, matmul, staging
    from gpukb.measuring.device import sampler

    sms = _sm_count(torch.device("cuda"))
    one = torch.ones((), device="cuda")
    rows_out: list[dict] = []
    partial = out_dir / "partial-sweep.json"
    for which, dtype, layout, (group, label, m, n, k) in sweep_cases(sets):
        if budget.left() < 15:
            print(f"sweep: stopping, {budget.left():.0f} s left", flush=True)
            break
        fp8 = dtype == "float8_e4m3fn"
        row: dict = {
            "sweep": which, "dtype": dtype, "group": group, "label": label, "layout": layout, "m": m, "n": n, "k": k,
            "tuned_on": (dtype, layout, (m, n, k)) in tuned_shapes,
            "config": None, "split_k": None, "staged": [],
            "peer": "torch._scaled_mm(use_fast_accum=False)" if fp8 else "torch.matmul (cuBLAS)",
            "kernel_ms": [], "peer_ms": [], "kernel_host_us": [], "peer_host_us": [],
            "ratio": None, "kernel_tflops": None, "peer_tflops": None,
            "rel_error": None, "peer_rel_error": None, "floor": None, "all_written": None,
        }  # fmt: skip
        a = b = c = c_peer = None
        try:
            tdtype = torch_dtype(dtype)
            a, b = operands(torch, tdtype, m, n, k, layout)
            out_dtype = torch.bfloat16 if fp8 else tdtype
            c = torch.full((m, n), math.nan, device="cuda", dtype=out_dtype)
            config = default_config(a, b, c)
            row["config"] = config.as_dict()
            row["split_k"] = split_for(m, n, k, config, sms) if config.kernel == "splitk" else None
            if config.split_tail:
                row["split_k"] = tail_rows(m, n, k, config, sms)[1]
            row["staged"] = [name for name, why in staging(a, b, c, config).items() if why]
            matmul(a, b, out=c)
            torch.cuda.synchronize()
            row["all_written"] = bool(torch.isfinite(c).all())
            rows = torch.arange(0, m, max(1, m // ERROR_ROWS), device="cuda")[:ERROR_ROWS]
            row["rel_error"], row["floor"] = _errors(torch, c, a, b, rows)
            kernel = lambda a=a, b=b, c=c: matmul(a, b, out=c)  # noqa: E731
            if fp8:
                peer = lambda a=a, b=b: torch._scaled_mm(  # noqa: E731
                    a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=False
                )
            else:
                c_peer = torch.empty(m, n, device="cuda", dtype=out_dtype)
                peer = lambda a=a, b=b, c_peer=c_peer: torch.matmul(a, b, out=c_peer)  # noqa: E731
            try:
                ref_out = peer()
                ref_out = c_peer if not fp8 else (ref_out[0] if isinstance(ref_out, tuple) else ref_out)
                row["peer_rel_error"], _ = _errors(torch, ref_out, a, b, rows)
                del ref_out
            except Exception as err:
                row["peer_error"] = _first_line(err)
                peer = None
            _keep_busy(torch, kernel, 0.03)  # compiling and the float64 check left the GPU idle: clock up first
            clocks = sampler()
            if clocks is not None:
                clocks.start()
            for order in ((kernel, peer), (peer, kernel), (kernel, peer)):
                for fn in order:
                    if fn is None:
                        continue
                    side = "kernel" if fn is kernel else "peer"
                    row[f"{side}_ms"].append(_bench(fn, WARMUP_MS, REP_MS, row[f"{side}_host_us"]))
            if clocks is not None:
                window = clocks.stop()
                row["clocks"] = None if window is None else window.model_dump(mode="json")
            k_ms = statistics.median(row["kernel_ms"])
            row["kernel_tflops"] = _tflops(m, n, k, k_ms)
            if row["peer_ms"]:
                p_ms = statistics.median(row["peer_ms"])
                row["peer_tflops"] = _tflops(m, n, k, p_ms)
                row["ratio"] = p_ms / k_ms
        except Exception as err:
            row["error"] = _first_line(err)
        rows_out.append(row)
        print(_describe_row(row), flush=True)
        _write_scratch(partial, rows_out)
        a = b = c = c_peer = kernel = peer = None
        torch.cuda.empty_cache()
    return rows_out


def _describe_row(row: dict) -> str:
    from gpukb.gemm.triton.configs import Config

    ratio = "–" if row["ratio"] is None else f"{row['ratio']:.3f}"
    err = (row["rel_error"] or math.nan) / (row["peer_rel_error"] or math.nan)
    label = Config(**row["config"]).label if row["config"] else "–"
    split = f" split {row['split_k']}" if row["split_k"] else ""
    staged = f" staged {','.join(row['staged'])}" if row["staged"] else ""
    failed = f" ERROR {row['error']}" if row.get("error") else ""
    return (
        f"{row['sweep']} {row['dtype']} {row['layout']} {row['label']}: ratio {ratio} "
        f"({row['kernel_tflops'] or 0:.0f} vs "
        f"{row['peer_tflops'] or 0:.0f} TFLOP/s) err x{err:.2f} [{label}{split}{staged}]{failed}"
    )


def profile_rows(torch: Any, rows: list[dict], budget: Budget, every: bool = False) -> None:
    """After every timing is done (the profiler slows later launches): the GPU kernels each side launched, by name,
    for the bf16 NN rows with M ≤ ``PROFILE_MAX_M`` and the K-heavy ones, or with ``every``, for every bf16 row in
    its own layout."""
    from gpukb.gemm.triton.matmul import matmul

    for row in rows:
        if row["dtype"] != "bfloat16" or row.get("error") or budget.left() < 5:
            continue
        if not every and (row["layout"] != "NN" or not (row["m"] <= PROFILE_MAX_M or row["group"] == "k-heavy")):
            continue
        m, n, k = row["m"], row["n"], row["k"]
        a, b = operands(torch, torch.bfloat16, m, n, k, row["layout"])
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        matmul(a, b, out=c)
        torch.matmul(a, b, out=c)
        row["kernels"] = _kernel_names(torch, lambda a=a, b=b, c=c: matmul(a, b, out=c))
        row["peer_kernels"] = _kernel_names(torch, lambda a=a, b=b, c=c: torch.matmul(a, b, out=c))
        print(f"kernels {row['label']}: Triton {row['kernels']}, cuBLAS {row['peer_kernels']}", flush=True)


#: The look-up's rules a sweep may run without (``tuning.RULES``), by flag: the rule, and what the record says of it.
RULE_FLAGS = {
    "--without-two-block": ("two_blocks", "step 15's rule (tiles of two blocks)"),
    "--without-tokens": ("few_tokens", "step 16's rule (64-row tiles for a few hundred rows)"),
    "--without-many-rounds": ("many_rounds", "step 17's rule (the default over many rounds)"),
    "--without-token-split": ("token_split", "step 18's rule (persistent tiles for split-K)"),
    "--without-swap": ("swap_tokens", "step 19's rule (swapped tiles)"),
    "--without-mid": ("mid_tiles", "step 20's rule (tiles for 321 to 2048 rows)"),
    "--without-deep": ("deep_tokens", "step 21's rule (deeper pipelines for a few hundred rows)"),
}


def _dest(flag: str) -> str:
    # argparse's attribute for a flag: "--without-swap" -> "without_swap"
    return flag.lstrip("-").replace("-", "_")


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--budget", type=float, default=280.0, help="seconds the whole run may take")
    parser.add_argument("--table", type=Path, help="use this tuning table instead of tuning (skips the tuning)")
    parser.add_argument("--tune", choices=("sweep", "issue29", "losers", "gaps", "fill", *_by_product_modes(), "none"),
                        default="sweep",
                        help="which classes to tune; none: use the committed tables")  # fmt: skip
    parser.add_argument("--tune-only", action="store_true", help="stop after writing the tuning table")
    parser.add_argument("--reserve", type=float, default=SWEEP_RESERVE_S, help="seconds the tuning leaves the sweep")
    parser.add_argument("--name", default="triton-gemm-sweep-h100", help="the sweep record's file name, no suffix")
    parser.add_argument("--sets", default=",".join(SETS), help=f"the sets of shapes to measure, of {','.join(SETS)}")
    for flag, (rule, what) in RULE_FLAGS.items():
        parser.add_argument(flag, action="store_true",
                            help=f"the look-up without {what} (tuning.use_rule({rule!r}, False))")  # fmt: skip
    parser.add_argument("--bytes-rules", action="store_true",
                        help="the look-up with step 11's rules (tuning.use_bytes_rules); off by default")  # fmt: skip
    parser.add_argument("--profile", choices=("some", "all"), default="some",
                        help="which bf16 products get the names of the kernels each side launched: some (M ≤ "
                        f"{PROFILE_MAX_M} and the K-heavy ones, NN) or all (every one, in its own layout)")  # fmt: skip
    parser.add_argument("--held-out-commit", help="the commits that fixed the drawn sets, as comma-separated "
                        f"set=commit pairs, sets of {', '.join(DRAWS)} (written to the record)")  # fmt: skip


def triton_gemm_sweep(script: Script) -> int:
    global _SCRIPT
    _SCRIPT = script
    args, started = script.args, script.started
    args.out_dir = args.output  # the folder the skeleton parsed
    import torch

    from gpukb.gemm.triton import tuning
    from gpukb.gemm.triton.matmul import clear_plans
    from gpukb.gemm.triton.results import TritonGemmSweep
    from gpukb.records import parse, read

    sets = tuple(x for x in args.sets.split(",") if x)
    unknown = sorted(set(sets) - set(SETS))
    if unknown or not sets:
        raise ValueError(f"--sets must name sets of {list(SETS)}; got {args.sets!r}")
    drawn_text = held_out_text(sets, args.held_out_commit)
    budget = Budget(args.budget)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    checks = [] if args.tune_only else layout_checks(torch)
    print(f"checks done at {time.perf_counter() - started:.0f} s", flush=True)
    host = tiny_host = None
    try:
        if args.tune != "none":
            tuning.use_table(None)
        host = host_path(torch)
        tiny_host = host_path(torch, HOST_SHAPES[1])
    except Exception as err:
        print(f"host path failed: {_first_line(err)}", flush=True)
    if args.table:
        table = read(args.table, expect=tuning.GemmTuning)
        tuning.use_table(table)
        tuned = {(c.dtype, c.layout, tuple(c.shape)) for c in table.classes}
    elif args.tune == "none":
        tuning._ACTIVE.clear()  # the committed tables, as a user's import would read them
        active = tuning.active_table() or {}
        tuned = {(c.dtype, c.layout, tuple(c.shape)) for c in active.values()}
        print(f"committed tables: {len(active)} classes", flush=True)
    else:
        data = tune(torch, args.out_dir, budget, args.tune, 5 if args.tune_only else args.reserve)
        data["run"] = script.finished().model_dump(mode="json")
        table = parse(data, "tuning", expect=tuning.GemmTuning)
        name = TABLE_FILE if args.tune == "sweep" else TABLE_FILE.replace(".json", f"-{args.tune}.json")
        script.write(table, name)
        print(f"tuning done at {time.perf_counter() - started:.0f} s: {len(table.classes)} classes", flush=True)
        if args.tune_only:
            return 0
        # a table of new classes is measured over the committed ones (the first sweep's table replaces them)
        tuning.use_table(table, merge=args.tune != "sweep")
        tuned = {(c.dtype, c.layout, tuple(c.shape)) for c in table.classes}
    if args.bytes_rules:
        tuning.use_bytes_rules(True)
    switched_off = [(rule, what) for flag, (rule, what) in RULE_FLAGS.items() if getattr(args, _dest(flag))]
    for rule, _ in switched_off:
        tuning.use_rule(rule, False)
    clear_plans()  # plans made before hold configurations chosen without the table
    rows = sweep(torch, args.out_dir, budget, tuned, sets)
    profile_rows(torch, rows, budget, every=args.profile == "all")
    record = {
        "kind": TritonGemmSweep.kind_name(),
        "schema_version": TritonGemmSweep.version(),
        "timing": f"gpukb.measuring.timing.benchmark: CUDA events around each call, the samples queued behind a gate "
        f"(a spin kernel) so that no host time between a flush and its call is timed, the L2 flushed by a read before "
        f"every call; {WARMUP_MS} ms of warm-up and about {REP_MS} ms timed ({MIN_REPS} to {MAX_REPS} samples) a "
        "round; the kernel run for 30 ms first; three rounds (kernel first, peer first, kernel first); ratio from "
        "the median of each side's three round medians",
        "inputs": "torch.randn (standard normal), fresh per shape, rounded to the input type; outputs poisoned with "
        "NaN before the checked call",
        "error_rows": ERROR_ROWS,
        "tuning": (" + ".join(tuning.TABLE_RECORDS) if args.tune == "none" else tuning.TABLE_RECORD)
        + (", look-up with step 11's rules" if args.bytes_rules else "")
        + "".join(f", look-up without {what}" for _, what in switched_off),
        "host": host,
        "tiny_host": tiny_host,
        "checks": checks,
        "rows": rows,
        "held_out": drawn_text,
        "run": script.finished().model_dump(mode="json"),
    }
    path = script.write(parse(record, "sweep", expect=TritonGemmSweep), f"{args.name}.json")
    print(f"wrote {path} at {time.perf_counter() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(triton_gemm_sweep, __doc__, arguments, output="folder"))

"""Why one round of a product can be several times slower than the others, on the Triton side.

Run from the repository root on a machine with a Hopper GPU::

    python bench/triton_gemm_rounds.py OUT.json [--rounds N]

The held-out sweep (``gemm/triton-gemm-sweep-h100-held-out``, timed with ``triton.testing.do_bench``) had rows where
one round of the Triton kernel took 1.5 to 8 times the others. This script times such products again, each side
(``matmul`` and its peer) in many rounds, by five methods (``gpukb.gemm.triton.results.RoundsMethod``):

* ``do_bench, clocks sampled``: as the sweep did, with the clock and power sampler's thread running;
* ``do_bench``: the same without the sampler;
* ``traced``: do_bench's loop written out (a 256 MiB ``zero_()`` flush, events around the call), with the host's
  time per call and an event *before* each flush, so that a gap between one call's end and the next flush shows the
  GPU waiting for the host;
* ``held``: the project's timer with the samples queued behind a gate (``EventTimer(hold=True)``), same flush;
* ``graph``: a CUDA-graph replay of the call, timed held: the device time without the Python launch path.

Then one product with a host delay added to every call (a spin on the host clock), by do_bench and the held timer:
an event after a flush times the host as soon as the host's path outlasts the flush. And the device time of each
flush, and how long the sampler's NVML readings take. It writes one record (kind ``gemm.triton-rounds``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

try:
    import gpukb  # noqa: F401
except ImportError:  # a checkout on a machine where gpukb is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from gpukb.records.script import Script, count, main

#: The products (input type, layout, M, N, K): rows of the held-out sweep whose rounds disagreed, the staged copy
#: path (1023×1025×1027, rows a descriptor cannot read), and a long product whose rounds agreed.
CASES: tuple[tuple[str, str, int, int, int], ...] = (
    ("bfloat16", "NT", 1, 4864, 896),
    ("bfloat16", "NT", 67, 4864, 896),
    ("bfloat16", "NN", 69, 896, 4864),
    ("float16", "NT", 1, 896, 4864),
    ("bfloat16", "TN", 11008, 4096, 1),
    ("float16", "TN", 50257, 768, 3),
    ("bfloat16", "NN", 1023, 1025, 1027),
    ("bfloat16", "NT", 512, 11008, 4096),
    ("float8_e4m3fn", "NT", 64, 4096, 14336),
    ("bfloat16", "NN", 4096, 4096, 4096),
)
#: do_bench's settings in the sweep (ms), and the held timer's budget for a round of about the same length.
WARMUP_MS, REP_MS = 5, 20
#: The host delays added to each call of the delay product (µs).
DELAYS_US = (0.0, 40.0, 80.0, 120.0, 160.0, 240.0)
DELAY_CASE = ("bfloat16", "NT", 1, 4864, 896)
#: A call is counted as having waited for the host when the GPU sat idle this long before its flush (ms).
WAIT_MS = 0.005


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=count(), default=10, help="rounds of each do_bench and held method")


def _operands(torch: Any, dtype: str, layout: str, m: int, n: int, k: int) -> tuple[Any, Any, Any, Any]:
    """A, B, the kernel's call and the peer's call (fresh random inputs; fp8 as the sweep makes them)."""
    from gpukb.dtypes import torch_dtype
    from gpukb.gemm.triton.matmul import matmul
    from gpukb.gemm.triton.sweep import operands

    fp8 = dtype == "float8_e4m3fn"
    base = torch.bfloat16 if fp8 else torch_dtype(dtype)
    a, b = operands(torch, torch_dtype(dtype), m, n, k, layout)
    if fp8:
        one = torch.ones((), device="cuda")
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)

        def peer() -> Any:
            return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=False)
    else:
        c = torch.empty(m, n, device="cuda", dtype=base)
        c_peer = torch.empty(m, n, device="cuda", dtype=base)

        def peer() -> Any:
            return torch.matmul(a, b, out=c_peer)

    def kernel() -> Any:
        return matmul(a, b, out=c)

    return a, b, kernel, peer


def rounds(script: Script) -> Any:
    import torch
    from triton.testing import do_bench

    from gpukb.gemm.triton import tuning
    from gpukb.gemm.triton.results import TritonRounds
    from gpukb.measuring.device import nvml_reader, sampler
    from gpukb.measuring.timing import Budget, EventTimer, benchmark, captured
    from gpukb.records import parse

    args = script.args
    torch.manual_seed(0)
    zero_cache = torch.empty(256 * 2**20 // 4, dtype=torch.int32, device="cuda")  # do_bench's flush buffer

    def zero_flush() -> None:
        zero_cache.zero_()

    budget = Budget(warmup_ms=WARMUP_MS, rep_ms=REP_MS, min_reps=10, max_reps=200, min_warmup=2)

    def dobench(fn: Any) -> float:
        return float(do_bench(fn, warmup=WARMUP_MS, rep=REP_MS, return_mode="median"))

    def held(fn: Any, host: list[float]) -> float:
        measured = benchmark(fn, EventTimer(torch, hold=True), budget, zero_flush)
        host.append(statistics.median(measured.host_ms or [0.0]) * 1e3)
        return float(statistics.median(measured.samples))

    def traced(fn: Any, host: list[float], waited: list[float], calls: int = 200) -> float:
        for _ in range(50):  # do_bench's warm-up: back-to-back calls, no flush
            fn()
        marks = script.marks()
        spans, hosts = [], []
        for _ in range(calls):
            before = marks.mark()
            zero_flush()
            start = marks.mark()
            began = time.perf_counter()
            fn()
            hosts.append((time.perf_counter() - began) * 1e6)
            spans.append((before, start, marks.mark()))
        at = marks.since_first()
        times = [at[end] - at[start] for _, start, end in spans]
        idle = [at[spans[i][0]] - at[spans[i - 1][2]] > WAIT_MS for i in range(1, calls)]
        host.append(statistics.median(hosts))
        waited.append(sum(idle) / len(idle))
        return float(statistics.median(times))

    # what a flush costs on the device
    marks = script.marks()
    flush_us: dict[str, list[float]] = {"zero_ 256 MiB": [], "read": []}
    for _ in range(10):
        for name, flush in (("zero_ 256 MiB", zero_flush), ("read", script.flush)):
            first = marks.mark()
            flush()
            flush_us[name].append(marks.between(first, marks.mark()) * 1e3)
    flush = {name: round(statistics.median(values), 2) for name, values in flush_us.items()}
    print(f"flush: {flush}", flush=True)

    reads: list[float] = []
    found = nvml_reader()
    if found is not None:
        read = found[0]
        for _ in range(300):
            began = time.perf_counter()
            read()
            reads.append(round((time.perf_counter() - began) * 1e6, 2))
        print(f"sampler reads: median {statistics.median(reads):.1f} us, max {max(reads):.1f} us", flush=True)

    cases = []
    for dtype, layout, m, n, k in CASES:
        _, _, kernel, peer = _operands(torch, dtype, layout, m, n, k)
        kernel(), peer()
        torch.cuda.synchronize()
        sides = {"kernel": kernel, "peer": peer}
        got: dict[tuple[str, str], dict[str, list[float]]] = {}

        def add(
            side: str, method: str, ms: float, host: float | None = None, wait: float | None = None, got: dict = got
        ) -> None:
            entry = got.setdefault((side, method), {"rounds_ms": [], "host_us": [], "waited": []})
            entry["rounds_ms"].append(ms)
            if host is not None:
                entry["host_us"].append(host)
            if wait is not None:
                entry["waited"].append(wait)

        clocks = sampler()
        for _ in range(args.rounds):
            if clocks is not None:
                clocks.start()
            for side, fn in sides.items():
                add(side, "do_bench, clocks sampled", dobench(fn))
            for side, fn in sides.items():
                host: list[float] = []
                add(side, "held", held(fn, host), host[-1])
            if clocks is not None:
                clocks.stop()
            for side, fn in sides.items():
                add(side, "do_bench", dobench(fn))
        if clocks is not None:
            clocks.start()
        for _ in range(4):
            for side, fn in sides.items():
                host, waited = [], []
                add(side, "traced", traced(fn, host, waited), host[-1], waited[-1])
        if clocks is not None:
            clocks.stop()
        for side, fn in sides.items():
            replay = captured(torch, fn)
            for _ in range(3):
                host = []
                add(side, "graph", held(replay, host), host[-1])
        for (side, method), entry in got.items():
            cases.append({
                "dtype": dtype, "layout": layout, "m": m, "n": n, "k": k, "side": side, "method": method,
                "rounds_ms": entry["rounds_ms"], "host_us": entry["host_us"] or None,
                "waited": entry["waited"] or None,
            })  # fmt: skip
            ms = entry["rounds_ms"]
            print(f"{dtype} {layout} {m}x{n}x{k} {side:6} {method:24}: min {min(ms) * 1e3:8.1f} us, max "
                  f"{max(ms) * 1e3:8.1f} us, max/min {max(ms) / min(ms):5.2f}"
                  + (f", host {statistics.median(entry['host_us']):6.1f} us" if entry["host_us"] else "")
                  + (f", waited {max(entry['waited']):.2f}" if entry["waited"] else ""), flush=True)  # fmt: skip
        torch.cuda.empty_cache()

    dtype, layout, m, n, k = DELAY_CASE
    _, _, kernel, _ = _operands(torch, dtype, layout, m, n, k)
    kernel()
    delays = []
    for delay in DELAYS_US:

        def slowed(delay: float = delay) -> Any:
            end = time.perf_counter() + delay * 1e-6
            while time.perf_counter() < end:
                pass
            return kernel()

        for method in ("do_bench", "held"):
            values = [dobench(slowed) if method == "do_bench" else held(slowed, []) for _ in range(3)]
            delays.append({"delay_us": delay, "method": method, "rounds_ms": values})
            print(f"delay {delay:5.0f} us {method:8}: {[round(v * 1e3, 1) for v in values]} us", flush=True)

    record = {
        "kind": TritonRounds.kind_name(),
        "schema_version": TritonRounds.version(),
        "timing": f"do_bench(warmup={WARMUP_MS}, rep={REP_MS}, return_mode='median'); held: "
        f"gpukb.measuring.timing.benchmark with EventTimer(hold=True), {WARMUP_MS} ms warm-up, {REP_MS} ms timed, 10 "
        "to 200 samples, the same 256 MiB zero_() flush as do_bench before each call; traced: do_bench's loop "
        "(50 warm-up calls, 200 timed) with CUDA-event marks before each flush and the host clock around each call; "
        "graph: a CUDA-graph replay of one call, timed held; per product, rounds of do_bench with the clock "
        "sampler's thread running, the held timer (sampler running) and do_bench without the sampler, alternating",
        "tuning": " + ".join(tuning.TABLE_RECORDS),
        "flush_us": flush,
        "sampler_read_us": reads,
        "cases": cases,
        "delay_shape": list(DELAY_CASE[1:]),
        "delays": delays,
        "run": script.finished().model_dump(mode="json"),
    }
    return parse(record, "rounds", expect=TritonRounds)


if __name__ == "__main__":
    raise SystemExit(main(rounds, __doc__, arguments))

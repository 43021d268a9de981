"""The cell checks of docs/attention/kernel.md (``gpukb.attention.page.kernel``)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from typing import Any

import pytest

from gpukb.attention.pages import kernel as page
from tests.helpers import ROOT, markdown_tables

RECORD = ROOT / "src" / "gpukb" / "data" / "results" / "attention" / "flash-forward-h100.json"


TRAINING = ROOT / "src" / "gpukb" / "data" / "results" / "attention" / "flash-training-atomic-dq-h100.json"


GLUON = ROOT / "src" / "gpukb" / "data" / "results" / "attention" / "gluon-forward-persistent-h100.json"
GLUON_H200 = ROOT / "src" / "gpukb" / "data" / "results" / "attention" / "gluon-forward-h200.json"


BACKENDS = ("flash", "efficient", "cudnn")


def _raw() -> dict[str, Any]:
    return json.loads(RECORD.read_text(encoding="utf-8"))


def _training() -> dict[str, Any]:
    return json.loads(TRAINING.read_text(encoding="utf-8"))


def _gluon(path: Any = GLUON) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _flops(case: dict[str, Any], direction: str) -> float:
    """Operations of one case from first principles: 4 · B · H · pairs · D, 2.5 times that for a backward."""
    s = case["seq"]
    pairs = s * (s + 1) // 2 if case["causal"] else s * s
    return 4 * case["batch"] * case["heads"] * pairs * case["head_dim"] * (2.5 if direction == "backward" else 1)


def _rate_checked(timing: dict[str, Any], flops: float) -> float | None:
    """The timing's rate, after checking that it follows from its median time."""
    if timing["ms"] is None:
        assert timing["tflops"] is None
        return None
    rate = flops / (timing["ms"]["median"] * 1e-3) / 1e12
    assert timing["tflops"] == pytest.approx(rate, rel=1e-9)
    return rate


def check_flash_tuning(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw()
    assert len(table) == len(raw["candidates"])
    assert markdown.startswith(f"Tuning shape: {raw['tuning_shape']}.")
    used = {(c["head_dim"], c["causal"]): c["config"] for c in raw["cases"]}
    for r, c in zip(table, raw["candidates"], strict=True):
        assert (r["D"], r["causal"]) == (str(c["head_dim"]), "yes" if c["causal"] else "no")
        assert r["tiling (BLOCK_M×BLOCK_N, warps, stages)"] == c["config"] == _label(c)
        assert r["TFLOP/s"] == ("-" if c["tflops"] is None else f"{c['tflops']:.0f}")
        assert r["registers"] == ("-" if c["registers"] is None else str(c["registers"]))
        assert r["spills"] == ("-" if c["spills"] is None else str(c["spills"]))
        pick = "chosen" if used.get((c["head_dim"], c["causal"])) == c["config"] else ""
        assert r["note"] == (c["error"] or pick), r
    for d, causal in {(c["head_dim"], c["causal"]) for c in raw["candidates"]}:
        tried = [c for c in raw["candidates"] if (c["head_dim"], c["causal"]) == (d, causal) and c["tflops"]]
        fastest = max(tried, key=lambda c: c["tflops"])["config"]
        chosen = [r for r in table if r["note"] == "chosen" and (int(r["D"]), r["causal"] == "yes") == (d, causal)]
        assert [r["tiling (BLOCK_M×BLOCK_N, warps, stages)"] for r in chosen] == [fastest]


def _label(t: dict[str, Any]) -> str:
    """A tiling as the record's ``config`` spells it: ``"64x64 w4 s3 tma"`` (blocks, warps, stages, TMA)."""
    return f"{t['block_m']}x{t['block_n']} w{t['num_warps']} s{t['num_stages']}{' tma' if t['tma'] else ''}"


def check_flash_defaults(markdown: str, kwargs: dict[str, Any]) -> None:
    # the kernel's table of defaults, as data (its fields, not its label property), rows sorted by (D, causal)
    from gpukb.attention.kernel import DEFAULT_CONFIGS

    (table,) = markdown_tables(markdown)
    raw = _raw()
    assert all(c["config"] == _label(c) for c in raw["candidates"])  # the record's spelling of a tiling
    keys = sorted(DEFAULT_CONFIGS)
    assert [(r["D"], r["causal"]) for r in table] == [(str(d), "yes" if causal else "no") for d, causal in keys]
    for r, key in zip(table, keys, strict=True):
        assert r["default tiling"] == _label(dataclasses.asdict(DEFAULT_CONFIGS[key])), r
    used = {(c["head_dim"], c["causal"]): c["config"] for c in raw["cases"]}
    # head dim 256 was tuned by the training run: its forward cases used what it chose
    used |= {(c["head_dim"], c["causal"]): c["config"] for c in _training()["cases"]
             if c["direction"] == "forward" and c["head_dim"] == 256}  # fmt: skip
    assert {(int(r["D"]), r["causal"] == "yes") for r in table} >= set(used)
    for r in table:
        key = (int(r["D"]), r["causal"] == "yes")
        if key in used:  # the head dims the run measured: the code's default is what the run chose
            assert r["default tiling"] == used[key], r


def check_flash_backward_defaults(markdown: str, kwargs: dict[str, Any]) -> None:
    from gpukb.attention.kernel import DEFAULT_BACKWARD_CONFIGS

    (table,) = markdown_tables(markdown)
    assert [int(r["D"]) for r in table] == sorted(DEFAULT_BACKWARD_CONFIGS)
    used = {c["head_dim"]: c["config"] for c in _training()["cases"] if c["direction"] == "backward"}
    for r in table:
        cfg = DEFAULT_BACKWARD_CONFIGS[int(r["D"])]
        label = f"{cfg.block_m1}x{cfg.block_n1}/{cfg.block_m2}x{cfg.block_n2} w{cfg.num_warps} s{cfg.num_stages}"
        assert r["default backward tiling (dK/dV blocks / dQ blocks, warps, stages)"] == label
        if int(r["D"]) in used:  # measured head dims: the code's default is what the run chose and used
            assert label == used[int(r["D"])], r


def check_training_steps(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _training()
    (b, h, s, d) = (4, 32, 4096, 128)
    standard = {"batch": b, "heads": h, "seq": s, "head_dim": d}
    expected = [st for direction in ("forward", "backward") for causal in (False, True)
                for st in raw["steps"] if st["direction"] == direction and st["causal"] == causal]  # fmt: skip
    assert len(table) == len(expected) == 12
    previous = None
    for r, st in zip(table, expected, strict=True):
        assert (r["pass"], r["causal"], r["step"]) == (st["direction"], "yes" if st["causal"] else "no", st["step"])
        assert r["implementation"] == st["description"]
        rate = _rate_checked(st["timing"], _flops({**standard, "causal": st["causal"]}, st["direction"]))
        assert r["median ms"] == f"{st['timing']['ms']['median']:.3f}"
        assert r["TFLOP/s"] == f"{rate:.0f}"
        first = st["step"] in ("naive", "naive-backward")
        assert r["× previous step"] == ("-" if first else f"{rate / previous:.2f}"), r
        previous = rate
    # the story's order: every step faster than the one before it
    assert all(float(r["× previous step"]) > 1 for r in table if r["× previous step"] != "-")
    assert "Measured on" in markdown


def _shape(case: dict[str, Any]) -> str:
    heads = str(case["heads"]) if case["heads"] == case["kv_heads"] else f"{case['heads']}/{case['kv_heads']}"
    causal = ", causal" if case["causal"] else ""
    return f"B={case['batch']}, H={heads}, S={case['seq']}, D={case['head_dim']}{causal}"


def check_training_sweep(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    direction = kwargs["args"][0] if kwargs.get("args") else kwargs.get("direction", "forward")
    cases = [c for c in _training()["cases"] if c["direction"] == direction]
    assert len(table) == len(cases) >= (20 if direction == "forward" else 10)
    for r, c in zip(table, cases, strict=True):
        assert r["shape"] == _shape(c)
        assert r["kernel tiling"] == c["config"]
        flops = _flops(c, direction)
        ours = _rate_checked(c["triton"], flops)
        assert r["kernel"] == f"{ours:.0f}"
        rates = {t["name"]: _rate_checked(t, flops) for t in c["backends"]}
        for name in BACKENDS:
            assert r[name] == ("-" if rates[name] is None else f"{rates[name]:.0f}")
        best = max((v, k) for k, v in rates.items() if v)
        assert r["kernel ÷ fastest"] == f"{ours / best[0]:.2f} ({best[1]})"
        clocks = [w["sm_mhz_min"] for w in c["triton"]["clocks"]]
        assert r["kernel SM MHz (min)"] == (f"{min(clocks):.0f}" if clocks else "-")
        differences = [t["difference"] for t in c["backends"] if t["difference"] is not None]
        assert r["largest difference from kernel"] == f"{max(differences):.1e}"
        assert max(differences) < 1e-2  # bf16 implementations of one function: a few roundings apart
    shapes = {(c["seq"], c["head_dim"], c["heads"] != c["kv_heads"], c["batch"]) for c in cases}
    assert {s for s, *_ in shapes} >= {512, 4097, 16384}  # short, long, and a length no block divides
    assert {d for _, d, *_ in shapes} == {64, 128, 256}
    assert any(gqa for *_, gqa, _ in shapes)


def check_training_ratios(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    cases = _training()["cases"]
    assert [(r["pass"], r["SDPA backend"]) for r in table] == [
        (d, n) for d in ("forward", "backward") for n in BACKENDS
    ]
    for r in table:
        mine = [c for c in cases if c["direction"] == r["pass"]]
        ratios = []
        for c in mine:
            other = next(t for t in c["backends"] if t["name"] == r["SDPA backend"])
            if other["tflops"]:
                ratios.append(c["triton"]["tflops"] / other["tflops"])
        assert (int(r["shapes"]), int(r["refused"])) == (len(ratios), len(mine) - len(ratios))
        geomean = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        assert r["kernel ÷ backend, geomean"] == f"{geomean:.2f}"
        assert (r["lowest"], r["highest"]) == (f"{min(ratios):.2f}", f"{max(ratios):.2f}")


def check_training_losses(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    tr = _training()["training"]
    kernel, sdpa, control = tr["kernel"], tr["sdpa"], tr["control_losses"]
    assert len(kernel) == len(sdpa) == len(control) == tr["steps"] == 300
    steps = [int(r["step"]) for r in table]
    assert steps == sorted(steps)
    assert (steps[0], steps[-1]) == (0, 299)
    for r in table:
        step = int(r["step"])
        assert r["kernel"] == f"{kernel[step]:.4f}"
        assert r[tr["peer"]] == f"{sdpa[step]:.4f}"
        assert r[tr["control"]] == f"{control[step]:.4f}"
        assert r["kernel vs SDPA"] == f"{abs(kernel[step] - sdpa[step]) / sdpa[step]:.1e}"
        assert r["math vs SDPA"] == f"{abs(control[step] - sdpa[step]) / sdpa[step]:.1e}"

    def agree(a: list[float], b: list[float]) -> int:  # leading steps within 2^-8, counted here independently
        return next((i for i, (x, y) in enumerate(zip(a, b, strict=True)) if abs(x - y) > 2**-8 * y), len(a))

    ours, theirs = agree(kernel, sdpa), agree(control, sdpa)
    assert f"for the first {ours} of 300 steps" in markdown
    assert f"math backend equals SDPA's default for the first {theirs}." in markdown
    # the page's reading of it: the kernel stays equal to SDPA about as long as SDPA's backends agree, and learns
    assert ours >= 0.8 * theirs
    assert sum(kernel[-50:]) / 50 < 0.5 * kernel[0]
    means = [f"{sum(xs[-50:]) / 50:.3f}" for xs in (kernel, sdpa, control)]
    assert (f"Mean loss over the last 50 steps: kernel {means[0]}, SDPA {means[1]}, SDPA math {means[2]}. "
            f"Model: {tr['model']}.\n\n") in markdown  # fmt: skip


def check_training_tuning(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _training()
    assert markdown.startswith(f"Tuning shapes: {raw['tuning_shapes']}.")
    fwd, bwd = raw["forward_candidates"], raw["backward_candidates"]
    assert len(table) == len(fwd) + len(bwd)
    used_f = {(c["head_dim"], c["causal"]): c["config"] for c in raw["cases"] if c["direction"] == "forward"}
    used_b = {c["head_dim"]: c["config"] for c in raw["cases"] if c["direction"] == "backward"}
    for r, c in zip(table, fwd + bwd, strict=True):
        backward = "block_m1" in c
        assert (r["pass"], int(r["D"])) == ("backward" if backward else "forward", c["head_dim"])
        assert r["causal"] == ("yes" if c.get("causal") else "no")
        assert r["tiling"] == c["config"]
        assert r["TFLOP/s"] == ("-" if c["tflops"] is None else f"{c['tflops']:.0f}")
        if backward:
            # dK/dV kernel / dQ kernel, "-" where dQ was added by the dK/dV kernel (no dQ kernel ran)
            if c["registers"]:
                assert ("dq" in c["registers"]) == (c.get("dq", "pass") == "pass")
            assert r["registers"] == " / ".join(str(c["registers"].get(k, "-")) for k in ("dkdv", "dq"))
            assert r["spills"] == " / ".join(str(c["spills"].get(k, "-")) for k in ("dkdv", "dq"))
            pick = used_b.get(c["head_dim"]) == c["config"]
        else:
            assert (r["registers"], r["spills"]) == (str(c["registers"]), str(c["spills"]))
            pick = used_f.get((c["head_dim"], c["causal"])) == c["config"]
        assert r["note"] == (c["error"] or ("chosen" if pick else "")), r
    # the tiling each case used is the fastest candidate of its head dim (and causality, forward)
    for (d, causal), config in used_f.items():
        tried = [c for c in fwd if (c["head_dim"], c["causal"]) == (d, causal) and c["tflops"]]
        if tried:
            assert max(tried, key=lambda c: c["tflops"])["config"] == config
    for d, config in used_b.items():
        tried = [c for c in bwd if c["head_dim"] == d and c["tflops"]]
        assert max(tried, key=lambda c: c["tflops"])["config"] == config
    chosen = [r for r in table if r["note"] == "chosen"]
    assert len(chosen) == 2 + len(used_b)
    # "Why cuDNN is faster": every tiling that adds dQ in the dK/dV kernel ran slower than the chosen one, and the
    # dK/dV kernel spilled registers in most of them
    added = [c for c in bwd if c.get("dq", "pass") != "pass"]
    assert {c["dq"] for c in added} == {"atomic", "tma"}
    for c in added:
        chosen_rate = next(
            x["tflops"] for x in bwd if x["head_dim"] == c["head_dim"] and x["config"] == used_b[c["head_dim"]]
        )
        assert c["tflops"] < chosen_rate
    assert 2 * sum(c["spills"]["dkdv"] > 0 for c in added) > len(added)


def _rates(case: dict[str, Any]) -> dict[str, float | None]:
    """Each implementation's rate on a Gluon-record case, each checked against its median time."""
    flops = _flops({**case, "causal": case["causal"]}, "forward")
    return {t["name"]: _rate_checked(t, flops) for t in case["timings"]}


def _spread(case: dict[str, Any], name: str) -> tuple[float, float]:
    """An implementation's interquartile range of times (ms) on a Gluon-record case."""
    ms = next(t["ms"] for t in case["timings"] if t["name"] == name)
    return ms["q1"], ms["q3"]


def check_gluon_steps(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _gluon()
    standard = {c["causal"]: c for c in raw["cases"] if c["group"] == "standard"}
    assert (standard[False]["batch"], standard[False]["heads"], standard[False]["seq"],
            standard[False]["head_dim"]) == (4, 32, 4096, 128)  # fmt: skip
    rates = {causal: _rates(case) for causal, case in standard.items()}
    builds = {b["step"]: b for b in raw["builds"]}
    assert [r["implementation"] for r in table] == [t["name"] for t in standard[False]["timings"]]
    for r in table:
        name = r["implementation"]
        for causal, suffix in ((False, ""), (True, " causal")):
            rate, cudnn = rates[causal][name], rates[causal]["cudnn"]
            assert r["TFLOP/s" + suffix] == f"{rate:.0f}"
            assert r["÷ cuDNN" + suffix] == f"{rate / cudnn:.2f}"
        build = builds.get(name.removeprefix("gluon "))
        if name.startswith("gluon "):
            assert build is not None
            assert build["failure"] is None
            assert build["error"] <= 1.5 * build["sdpa_error"] + 1e-4  # every timed step was checked
            assert r["what it adds"] == build["description"]
            assert r["compiled (D=128)"] == (f"{build['registers']} regs, {build['spills']} spills, "
                                             f"{build['shared_bytes'] // 1024} KiB shared")  # fmt: skip
            serialized = any("C7514" in n and "serialized" in n for n in build["ptxas"])
            note = "C7514: wgmma.mma_async instructions are serialized" if serialized else "-"
            assert r["ptxas note"] == note
        else:  # the Triton kernel and the SDPA backends: no build of ours to describe
            assert (r["what it adds"], r["compiled (D=128)"], r["ptxas note"]) == ("-", "-", "-")
    # what the page says of the steps, in both columns: each of the first three steps gains; leaving P·V in
    # flight loses to the synchronous P·V it was meant to improve on, and is the step ptxas serializes; the
    # intra-warpgroup overlap of Q·Kᵀ alone is the fastest step that launches a program per tile; the explicit
    # ping-pong does not beat the two free-running consumers
    for rate in rates.values():
        assert rate["gluon plain"] < rate["gluon ws"] < rate["gluon ws-2wg"] < rate["gluon ws-2wg-overlap"]
        assert rate["gluon ws-2wg-overlap-qk-pv"] < rate["gluon ws-2wg"]
        assert rate["gluon ws-pingpong"] < rate["gluon ws-2wg"]
        per_tile = [v for n, v in rate.items() if n.startswith("gluon ") and n != "gluon persistent"]
        assert max(per_tile) == rate["gluon ws-2wg-overlap"]
    # against cuDNN (the page's opening and "Why cuDNN is faster"): without a causal mask the fastest step is level,
    # the spreads of the two times overlapping, in rounds where the card reached its power limit and its clock
    # fell below its top; with a mask the persistent step is ahead, beyond the spreads, and ahead of the Triton
    # kernel
    best = max((n for n in rates[False] if n.startswith("gluon ")), key=lambda n: rates[False][n])
    level, peer = _spread(standard[False], best), _spread(standard[False], "cudnn")
    assert level[0] <= peer[1]
    assert peer[0] <= level[1]
    windows = [w for t in standard[False]["timings"] if t["name"] in (best, "cudnn") for w in t["clocks"]]
    start = raw["run"]["clocks"]["start"]
    assert max(w["power_w_median"] for w in windows) >= start["power_limit_w"]
    assert min(w["sm_mhz_min"] for w in windows) < start["max_sm_mhz"]
    assert _spread(standard[True], "gluon persistent")[1] < _spread(standard[True], "cudnn")[0]
    assert max((n for n in rates[True] if n.startswith("gluon ")), key=lambda n: rates[True][n]) == "gluon persistent"
    assert rates[True]["gluon persistent"] > rates[True]["tl"]
    assert [b["step"] for b in raw["builds"] if any("C7514" in n for n in b["ptxas"])] == ["ws-2wg-overlap-qk-pv"]
    assert "Measured on" in markdown


def check_gluon_sweep(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    cases = [c for c in _gluon()["cases"] if c["group"] == "sweep"]
    assert len(table) == len(cases) >= 20
    ratios = []
    for r, c in zip(table, cases, strict=True):
        assert r["shape"] == _shape(c)
        rates = _rates(c)
        gluon = {n.removeprefix("gluon "): v for n, v in rates.items() if n.startswith("gluon ")}
        assert len(gluon) >= 1
        for name, rate in gluon.items():
            assert r[name] == f"{rate:.0f}"
        for name in ("tl", *BACKENDS):
            assert r[name] == ("-" if rates[name] is None else f"{rates[name]:.0f}")
        ratio = max(gluon.values()) / rates["cudnn"]
        assert r["fastest Gluon ÷ cuDNN"] == f"{ratio:.2f}"
        ratios.append(ratio)
    defaults = _step_ratios(cases)
    assert f"over the {len(cases)} shapes: {_summary(ratios)}; the default step (persistent) alone: " \
           f"{_summary(defaults)}.\n\nMeasured on" in markdown  # fmt: skip
    # the page's opening: over more shapes the default step trails cuDNN most at the shortest sequences, and
    # ("Why cuDNN is faster") cuDNN stays ahead somewhere in the sweep
    lowest = min(range(len(cases)), key=lambda i: defaults[i])
    assert cases[lowest]["seq"] == min(c["seq"] for c in cases)
    assert min(defaults) < 1


def _step_ratios(cases: list[dict[str, Any]], step: str = "persistent") -> list[float]:
    """Per sweep case, a step's rate (the default step's unless said) over cuDNN's, each rate checked against its
    time."""
    return [(r := _rates(c))[f"gluon {step}"] / r["cudnn"] for c in cases]


def _summary(ratios: list[float]) -> str:
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    return f"geometric mean {geomean:.2f}, lowest {min(ratios):.2f}, highest {max(ratios):.2f}"


def check_gluon_profile(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    profile = _gluon()["profile"]
    assert {"cudnn", "ws-2wg-overlap", "persistent"} <= set(profile)
    assert [r["reading"] for r in table] == list(page.PROFILE_METRICS)
    for r in table:
        for name, readings in profile.items():
            assert r[name] == readings.get(r["reading"], "-")
    kernels = "; ".join(f"{name}: `{readings['kernel']}`" for name, readings in profile.items())
    assert f"Kernels: {kernels}." in markdown

    # what the page says of these readings: the same 384 threads a program; cuDNN issues more instructions a cycle
    # and waits fewer cycles between two, with no more resident warps; its grid is one program per SM
    def number(name: str, reading: str) -> float:
        return float(profile[name][reading].split()[0].replace(",", ""))

    gluon = [n for n in profile if n != "cudnn"]
    assert {profile[n]["threads per block"] for n in profile} == {"384"}
    for name in gluon:
        assert number("cudnn", "Issued Ipc Active") > number(name, "Issued Ipc Active")
        assert number("cudnn", "Warp Cycles Per Issued Instruction") < number(
            name, "Warp Cycles Per Issued Instruction"
        )
        assert number("cudnn", "Achieved Occupancy") <= number(name, "Achieved Occupancy")
    assert profile["ws-2wg-overlap"]["grid"] == "(32, 128, 1)"  # 4096 / 128 query blocks × 4 · 32 heads
    sms = f"({_gluon()['run']['gpu']['sm_count']}, 1, 1)"
    assert profile["cudnn"]["grid"] == profile["persistent"]["grid"] == sms
    # the overlap step took about 5% more cycles than cuDNN in the profiled launch, the persistent step about 2%;
    # going persistent issued more instructions a cycle and waited fewer cycles between two
    cycles = number("cudnn", "Elapsed Cycles")
    assert round(100 * (number("ws-2wg-overlap", "Elapsed Cycles") / cycles - 1)) == 5
    assert round(100 * (number("persistent", "Elapsed Cycles") / cycles - 1)) == 2
    assert number("persistent", "Issued Ipc Active") > number("ws-2wg-overlap", "Issued Ipc Active")
    assert number("persistent", "Warp Cycles Per Issued Instruction") < number(
        "ws-2wg-overlap", "Warp Cycles Per Issued Instruction"
    )


def _ranking(case: dict[str, Any], among: set[str]) -> list[str]:
    """The Gluon steps of a case that are in ``among``, slowest first."""
    rates = _rates(case)
    return sorted((n for n in rates if n in among), key=lambda n: rates[n])


def check_gluon_on_h200(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    records = [_gluon(), _gluon(GLUON_H200)]
    names = [raw["run"]["gpu"]["name"] for raw in records]
    assert names[0].startswith("NVIDIA H100")
    assert names[1].startswith("NVIDIA H200")
    assert list(table[0]) == ["at B=4, H=32, S=4096, D=128 unless said", *names]
    rows = {r["at B=4, H=32, S=4096, D=128 unless said"]: r for r in table}
    assert len(rows) == len(table) == 5
    rankings = []
    # the persistent step came after the H200's run: the two are compared on the overlap step, which both swept
    # and profiled, and ranked on the steps both timed
    assert "persistent" not in records[1]["profile"]
    both = set.intersection(*({t["name"] for t in r["cases"][0]["timings"] if t["name"].startswith("gluon ")}
                              for r in records))  # fmt: skip
    assert "gluon ws-2wg-overlap" in both
    for raw, name in zip(records, names, strict=True):
        standard = {c["causal"]: c for c in raw["cases"] if c["group"] == "standard"}
        assert (standard[False]["batch"], standard[False]["heads"], standard[False]["seq"],
                standard[False]["head_dim"]) == (4, 32, 4096, 128)  # fmt: skip
        for causal, label in ((False, "fastest step, non-causal"), (True, "fastest step, causal")):
            rates = _rates(standard[causal])
            best = max((n for n in rates if n.startswith("gluon ")), key=lambda n: rates[n])
            rate, cudnn = rates[best], rates["cudnn"]
            assert rows[label][name] == (f"{best.removeprefix('gluon ')}: {rate:.0f} TFLOP/s, "
                                         f"{rate / cudnn:.2f}× cuDNN ({cudnn:.0f})")  # fmt: skip
        ratios = _step_ratios([c for c in raw["cases"] if c["group"] == "sweep"], "ws-2wg-overlap")
        geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        label = "ws-2wg-overlap ÷ cuDNN over the sweep: geometric mean (lowest to highest)"
        assert rows[label][name] == f"{geomean:.2f} ({min(ratios):.2f} to {max(ratios):.2f})"
        dram = raw["profile"]["ws-2wg-overlap"]["DRAM Throughput"]
        assert rows["DRAM throughput of ws-2wg-overlap (Nsight Compute)"][name] == dram
        top = raw["run"]["clocks"]["start"]
        assert rows["top SM clock, top memory clock"][name] == f"{top['max_sm_mhz']:.0f} MHz, " \
                                                              f"{top['max_mem_mhz']:.0f} MHz"  # fmt: skip
        rankings.append([_ranking(standard[causal], both) for causal in (False, True)])
    same = rankings[0] == rankings[1]
    sentence = ("The steps both runs timed rank in the same order on both cards, causal and not." if same else
                "The steps both runs timed do not rank in the same order on the two cards.")  # fmt: skip
    assert f"|\n\n{sentence}\n\nMeasured on an {names[1]} " in markdown  # the note between table and run
    # what the page says around the table: the same SMs at the same top clock, faster memory; DRAM about a tenth
    # busy or less for every profiled kernel on both cards; the overlap step's rates within 5% of each other on the
    # two cards
    h100, h200 = records
    assert h100["run"]["versions"] == h200["run"]["versions"]  # "the same versions"
    assert (
        h100["run"]["command"].split()[:2]
        == h200["run"]["command"].split()[:2]
        == ["python", "bench/attention_gluon.py"]
    )
    assert h100["run"]["gpu"]["sm_count"] == h200["run"]["gpu"]["sm_count"]
    assert h100["run"]["clocks"]["start"]["max_sm_mhz"] == h200["run"]["clocks"]["start"]["max_sm_mhz"]
    assert h200["run"]["clocks"]["start"]["max_mem_mhz"] > h100["run"]["clocks"]["start"]["max_mem_mhz"]
    for raw in records:
        assert all(float(p["DRAM Throughput"].split()[0]) <= 10.5 for p in raw["profile"].values())
    for causal in (False, True):
        a, b = (next(c for c in raw["cases"] if c["group"] == "standard" and c["causal"] == causal) for raw in records)
        assert _rates(a)["gluon ws-2wg-overlap"] == pytest.approx(_rates(b)["gluon ws-2wg-overlap"], rel=0.05)


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "flash_tuning": check_flash_tuning,
    "flash_defaults": check_flash_defaults,
    "flash_backward_defaults": check_flash_backward_defaults,
    "training_steps": check_training_steps,
    "training_sweep": check_training_sweep,
    "training_ratios": check_training_ratios,
    "training_losses": check_training_losses,
    "training_tuning": check_training_tuning,
    "gluon_steps": check_gluon_steps,
    "gluon_sweep": check_gluon_sweep,
    "gluon_profile": check_gluon_profile,
    "gluon_on_h200": check_gluon_on_h200,
}


def test_the_answer_states_each_backend_ratio_at_the_standard_shape() -> None:
    lines = page.training_answer().splitlines()
    standard = [c for c in _training()["cases"] if c["group"] == "standard"]
    assert len(lines) == len(standard) == 4
    for line, c in zip(lines, standard, strict=True):
        ratios = ", ".join(f"{c['triton']['tflops'] / t['tflops']:.2f}× {t['name']}" for t in c["backends"])
        kind = "causal" if c["causal"] else "non-causal"
        assert line == f"- {c['direction'].capitalize()}, {kind}: {c['triton']['tflops']:.0f} TFLOP/s, {ratios}."
        # the page's sentence under the list: faster than flash and efficient, slower than cuDNN, at this shape
        rates = {t["name"]: t["tflops"] for t in c["backends"]}
        assert rates["flash"] < c["triton"]["tflops"] < rates["cudnn"]
        assert rates["efficient"] < c["triton"]["tflops"]


#: ptxas's performance note as the Gluon records hold it (builds[].ptxas), and lines it could also print.
_C7514 = (
    "ptxas info : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma "
    "instructions reading accumulator registers of a wgmma between start and end of the pipeline stage in the "
    "function '_forward_ws'"
)


@pytest.mark.parametrize(
    ("line", "note"),
    [
        (_C7514, "C7514: wgmma.mma_async instructions are serialized"),
        (_C7514 + " (see ptxas (C7515)) due to x", "C7514: wgmma.mma_async instructions are serialized"),
        ("ptxas info : Potential Performance Loss: spills due to x", "spills"),
        (
            "ptxas info : (C7000) a note without the usual words",
            "C7000: ptxas info : (C7000) a note without the usual words",
        ),
    ],
    ids=["C7514", "more-parentheses-and-due-to", "no-code", "no-loss-words"],
)
def test_a_ptxas_note_is_its_code_and_what_it_costs(line: str, note: str) -> None:
    """The code in the first parentheses, then what the note says is lost, up to the first " due to"; no code, no
    prefix; a note without "Performance Loss: " is kept whole."""
    assert page._ptxas_note(line) == note


def test_the_sweep_shows_the_forward_pass_by_default() -> None:
    assert page.training_sweep() == page.training_sweep("forward")


def test_a_sweep_direction_that_does_not_exist_is_refused() -> None:
    with pytest.raises(ValueError, match="direction must be 'forward' or 'backward'; got 'sideways'"):
        page.training_sweep("sideways")


def test_the_gluon_answer_states_the_fastest_step_against_cudnn_and_the_triton_kernel() -> None:
    text = page.gluon_answer()
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    assert text.endswith(f"All of them timed in one run, on an {_gluon()['run']['gpu']['name']}.")
    standard = [c for c in _gluon()["cases"] if c["group"] == "standard"]
    assert len(lines) == len(standard) + 1 == 3
    sweep = [c for c in _gluon()["cases"] if c["group"] == "sweep"]
    assert lines[-1] == (f"- Over the {len(sweep)} shapes of the sweep below, the default step (persistent) "
                         f"÷ cuDNN: {_summary(_step_ratios(sweep))}.")  # fmt: skip
    for line, c in zip(lines[:-1], standard, strict=True):
        rates = _rates(c)
        best = max((n for n in rates if n.startswith("gluon ")), key=lambda n: rates[n])
        rate, cudnn, tl = rates[best], rates["cudnn"], rates["tl"]
        kind = "causal" if c["causal"] else "non-causal"
        ms = {t["name"]: t["ms"] for t in c["timings"]}
        iqr = {n: f"{ms[n]['median']:.3f} ms (IQR {ms[n]['q1']:.3f}–{ms[n]['q3']:.3f})" for n in (best, "cudnn")}
        assert line == (
            f"- Forward, {kind}: {rate:.0f} TFLOP/s ({best.removeprefix('gluon ')}), "
            f"{rate / cudnn:.2f}× cuDNN ({cudnn:.0f}), {rate / tl:.2f}× the Triton kernel ({tl:.0f}); "
            f"time per call {iqr[best]}, cuDNN's {iqr['cudnn']}."
        )


def test_the_gluon_default_is_the_fastest_step_recorded_over_every_shape() -> None:
    """``DEFAULT_GLUON_CONFIG`` is, of the steps timed on every shape of the record (standard and sweep), the one
    with the best geometric mean of its rate over cuDNN's."""
    from gpukb.attention.gluon_forward import DEFAULT_GLUON_CONFIG, STEPS

    cases = [_rates(c) for c in _gluon()["cases"]]
    steps = [n for n in cases[0] if n.startswith("gluon ") and all(r.get(n) for r in cases)]
    assert len(steps) >= 2
    best = max(steps, key=lambda n: math.prod(r[n] / r["cudnn"] for r in cases))
    assert STEPS[best.removeprefix("gluon ")] == DEFAULT_GLUON_CONFIG


def test_the_h200_comparison_needs_a_step_both_runs_swept_and_profiled() -> None:
    from gpukb.attention.results import GLUON_FORWARD_H200_ID, GLUON_FORWARD_ID, GluonForward
    from gpukb.records import load

    h100, h200 = load(GLUON_FORWARD_ID, GluonForward), load(GLUON_FORWARD_H200_ID, GluonForward)
    # the default (persistent) came after the H200's run: the overlap step is the one both swept and profiled
    assert page.compared_step([h100, h200]) == "ws-2wg-overlap"
    assert page.compared_step([h100]) == "persistent"
    with pytest.raises(ValueError, match="no Gluon step in common that was swept and profiled"):
        page.compared_step([h100, h200.model_copy(update={"profile": {}})])

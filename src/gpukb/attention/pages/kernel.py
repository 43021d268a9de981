"""The page “A Triton flash-attention kernel, forward and backward” (docs/attention/kernel.md): its tables, figures and
text.
"""

from __future__ import annotations

import math

from gpukb.attention.kernel import DEFAULT_BACKWARD_CONFIGS, DEFAULT_CONFIGS
from gpukb.attention.pages import _record
from gpukb.attention.results import (
    BACKENDS,
    FLASH_TRAINING_ID,
    GLUON_FORWARD_H200_ID,
    GLUON_FORWARD_ID,
    FlashTraining,
    GluonCase,
    GluonForward,
    Measured,
    Timed,
)
from gpukb.attention.training import BF16_ROUNDOFF, steps_in_agreement
from gpukb.records import load, measured_table
from gpukb.tables import markdown_table


def _fmt(x: float | None, digits: int = 0) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def flash_tuning() -> str:
    """Every tiling tried on the tuning shape, and which one each (head_dim, causal) took."""
    rec = _record()
    chosen = {(c.head_dim, c.causal): c.config for c in rec.cases}
    rows = []
    for c in rec.candidates:
        pick = "chosen" if chosen.get((c.head_dim, c.causal)) == c.config else ""
        rows.append([c.head_dim, "yes" if c.causal else "no", c.config, _fmt(c.tflops),
                     "-" if c.registers is None else c.registers, "-" if c.spills is None else c.spills,
                     c.error or pick])  # fmt: skip
    headers = ["D", "causal", "tiling (BLOCK_M×BLOCK_N, warps, stages)", "TFLOP/s", "registers", "spills", "note"]
    return f"Tuning shape: {rec.tuning_shape}.\n\n" + markdown_table(headers, rows)


def flash_defaults() -> str:
    """The kernel's default tilings for each head dimension and causality (``DEFAULT_CONFIGS``)."""
    rows = [[d, "yes" if causal else "no", cfg.label] for (d, causal), cfg in sorted(DEFAULT_CONFIGS.items())]
    return markdown_table(["D", "causal", "default tiling"], rows)


def flash_backward_defaults() -> str:
    """The backward kernels' default tilings for each head dimension (``DEFAULT_BACKWARD_CONFIGS``)."""
    rows = [[d, cfg.label] for d, cfg in sorted(DEFAULT_BACKWARD_CONFIGS.items())]
    return markdown_table(["D", "default backward tiling (dK/dV blocks / dQ blocks, warps, stages)"], rows)


def _training() -> FlashTraining:
    return load(FLASH_TRAINING_ID, FlashTraining)


def _ratio(case: Measured, name: str) -> float | None:
    """The kernel's rate over backend ``name``'s on one case; ``None`` where that backend did not run."""
    other = next(t for t in case.backends if t.name == name)
    return case.triton.tflops / other.tflops if case.triton.tflops and other.tflops else None


def _best(case: Measured) -> Timed:
    return max((t for t in case.backends if t.tflops), key=lambda t: t.tflops)


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def _shape(case: Measured) -> str:
    heads = f"{case.heads}" if case.heads == case.kv_heads else f"{case.heads}/{case.kv_heads}"
    return f"B={case.batch}, H={heads}, S={case.seq}, D={case.head_dim}{', causal' if case.causal else ''}"


def _clock(t: Timed) -> str:
    """The lowest SM clock read while ``t``'s rounds ran, MHz."""
    return "-" if not t.clocks else f"{min(w.sm_mhz_min for w in t.clocks):.0f}"


def training_answer() -> str:
    """The page's answer in numbers: forward and backward at the standard shape against each SDPA backend."""
    rec = _training()
    lines = []
    for direction in ("forward", "backward"):
        for case in (c for c in rec.cases if c.group == "standard" and c.direction == direction):
            ratios = ", ".join(f"{_ratio(case, n):.2f}× {n}" for n in BACKENDS if _ratio(case, n))
            kind = "causal" if case.causal else "non-causal"
            lines.append(f"- {direction.capitalize()}, {kind}: {case.triton.tflops:.0f} TFLOP/s, {ratios}.")
    return "\n".join(lines)


def training_steps() -> str:
    """The page's story at the standard shape: each step's implementation, time and rate, and its speed-up over
    the step before it (forward and backward separately)."""
    rec = _training()
    rows = []
    for direction in ("forward", "backward"):
        for causal in (False, True):
            previous = None
            for st in (s for s in rec.steps if s.direction == direction and s.causal == causal):
                t = st.timing
                gain = f"{t.tflops / previous:.2f}" if previous and t.tflops else "-"
                rows.append([direction, "yes" if causal else "no", st.step, st.description,
                             _fmt(t.ms.median if t.ms else None, 3), _fmt(t.tflops), gain])  # fmt: skip
                previous = t.tflops
    headers = ["pass", "causal", "step", "implementation", "median ms", "TFLOP/s", "× previous step"]
    return measured_table(headers, rows, rec.run)


def training_sweep(direction: str = "forward") -> str:
    """Every recorded shape of one direction: TFLOP/s of the kernel and of each backend, the kernel's ratio to
    the fastest backend, the lowest SM clock read while the kernel was timed, and the largest relative difference
    of a backend's result from the kernel's (for a backward, of dQ, dK or dV)."""
    if direction not in ("forward", "backward"):
        raise ValueError(f"direction must be 'forward' or 'backward'; got {direction!r}")
    rec = _training()
    rows = []
    for c in (c for c in rec.cases if c.direction == direction):
        best = _best(c)
        differences = [t.difference for t in c.backends if t.difference is not None]
        rows.append([_shape(c), c.config, _fmt(c.triton.tflops), *(_fmt(t.tflops) for t in c.backends),
                     f"{c.triton.tflops / best.tflops:.2f} ({best.name})", _clock(c.triton),
                     f"{max(differences):.1e}" if differences else "-"])  # fmt: skip
    headers = ["shape", "kernel tiling", "kernel", *BACKENDS, "kernel ÷ fastest", "kernel SM MHz (min)",
               "largest difference from kernel"]  # fmt: skip
    return measured_table(headers, rows, rec.run)


def training_ratios() -> str:
    """Per direction and backend: over how many shapes it ran, and the kernel's ratio to it (geometric mean,
    lowest, highest); the shapes it refused are counted."""
    rec = _training()
    rows = []
    for direction in ("forward", "backward"):
        cases = [c for c in rec.cases if c.direction == direction]
        for name in BACKENDS:
            ratios = [r for c in cases if (r := _ratio(c, name)) is not None]
            refused = len(cases) - len(ratios)
            if not ratios:
                rows.append([direction, name, 0, refused, "-", "-", "-"])
                continue
            rows.append([direction, name, len(ratios), refused, f"{_geomean(ratios):.2f}", f"{min(ratios):.2f}",
                         f"{max(ratios):.2f}"])  # fmt: skip
    headers = ["pass", "SDPA backend", "shapes", "refused", "kernel ÷ backend, geomean", "lowest", "highest"]
    return markdown_table(headers, rows)


#: The steps at which :func:`training_losses` shows the three losses.
LOSS_STEPS = (0, 50, 100, 110, 120, 150, 200, 250, 299)


def training_losses() -> str:
    """Losses of the small transformer trained with the kernel, with SDPA and with SDPA's math backend at a few
    steps, and for how many leading steps each pair stayed equal to within bf16 rounding."""
    rec = _training()
    tr = rec.training
    if tr is None:
        return "The recorded run has no training phase."
    rows = [[step, f"{tr.kernel[step]:.4f}", f"{tr.sdpa[step]:.4f}", f"{tr.control_losses[step]:.4f}",
             f"{abs(tr.kernel[step] - tr.sdpa[step]) / tr.sdpa[step]:.1e}",
             f"{abs(tr.control_losses[step] - tr.sdpa[step]) / tr.sdpa[step]:.1e}"]
            for step in LOSS_STEPS if step < tr.steps]  # fmt: skip
    headers = ["step", "kernel", tr.peer, tr.control, "kernel vs SDPA", "math vs SDPA"]
    ours, control = steps_in_agreement(tr.kernel, tr.sdpa), steps_in_agreement(tr.control_losses, tr.sdpa)
    last = 50
    mean = {name: sum(xs[-last:]) / last for name, xs in (("kernel", tr.kernel), ("sdpa", tr.sdpa),
                                                          ("control", tr.control_losses))}  # fmt: skip
    summary = (
        f"The kernel's loss equals SDPA's to within bf16 rounding (relative difference ≤ 2⁻⁸ = {BF16_ROUNDOFF:.4f}) "
        f"for the first {ours} of {tr.steps} steps; SDPA's math backend equals SDPA's default for the first "
        f"{control}. Mean loss over the last {last} steps: kernel {mean['kernel']:.3f}, SDPA {mean['sdpa']:.3f}, "
        f"SDPA math {mean['control']:.3f}. Model: {tr.model}."
    )
    return measured_table(headers, rows, rec.run, summary + "\n\n")


def training_tuning() -> str:
    """The tilings tried in the training run: forward at head dim 256 and backward at 64, 128 and 256."""
    rec = _training()
    fwd_used = {(c.head_dim, c.causal): c.config for c in rec.cases if c.direction == "forward"}
    bwd_used = {c.head_dim: c.config for c in rec.cases if c.direction == "backward"}
    rows = []
    for c in rec.forward_candidates:
        pick = "chosen" if fwd_used.get((c.head_dim, c.causal)) == c.config else ""
        rows.append(["forward", c.head_dim, "yes" if c.causal else "no", c.config, _fmt(c.tflops),
                     "-" if c.registers is None else c.registers, "-" if c.spills is None else c.spills,
                     c.error or pick])  # fmt: skip
    for c in rec.backward_candidates:
        pick = "chosen" if bwd_used.get(c.head_dim) == c.config else ""
        # dK/dV kernel / dQ kernel; "-" for a dQ added by the dK/dV kernel (no dQ kernel ran)
        regs = " / ".join(str(c.registers.get(k, "-")) for k in ("dkdv", "dq")) if c.registers else "-"
        spills = " / ".join(str(c.spills.get(k, "-")) for k in ("dkdv", "dq")) if c.spills else "-"
        rows.append(["backward", c.head_dim, "no", c.config, _fmt(c.tflops), regs, spills, c.error or pick])
    headers = ["pass", "D", "causal", "tiling", "TFLOP/s", "registers", "spills", "note"]
    return f"Tuning shapes: {rec.tuning_shapes}.\n\n" + markdown_table(headers, rows)


# --- the Gluon forward, step by step (docs/attention/kernel.md) -------------------------------------------------


def _gluon(record_id: str = GLUON_FORWARD_ID) -> GluonForward:
    return load(record_id, GluonForward)


def _rate(case: GluonCase, name: str) -> float | None:
    return next((t.tflops for t in case.timings if t.name == name), None)


def _iqr(case: GluonCase, name: str) -> str:
    """``"1.725 ms (IQR 1.699–1.798)"``: one timing's median and interquartile range."""
    ms = next(t.ms for t in case.timings if t.name == name)
    return f"{ms.median:.3f} ms (IQR {ms.q1:.3f}–{ms.q3:.3f})"


def _gluon_names(case: GluonCase) -> list[str]:
    return [t.name for t in case.timings if t.name.startswith("gluon ")]


def _default_step() -> str:
    """The name of :data:`gpukb.attention.gluon_forward.DEFAULT_GLUON_CONFIG` among the steps (``"persistent"``)."""
    from gpukb.attention.gluon_forward import DEFAULT_GLUON_CONFIG, STEPS

    return next(name for name, config in STEPS.items() if config == DEFAULT_GLUON_CONFIG)


def _fastest(case: GluonCase) -> tuple[str, float, float]:
    """The fastest Gluon step of one case: its step name, its rate, and cuDNN's rate in the same rounds."""
    best = max(_gluon_names(case), key=lambda n: _rate(case, n) or 0)
    return best.removeprefix("gluon "), _rate(case, best) or 0.0, _rate(case, "cudnn") or math.nan


def _sweep_ratios(rec: GluonForward, step: str | None = None) -> list[float]:
    """Per sweep shape, ``step``'s rate over cuDNN's; with no step, the fastest swept step's."""
    sweep = [c for c in rec.cases if c.group == "sweep"]
    names = _gluon_names(sweep[0]) if step is None else [f"gluon {step}"]
    return [max(_rate(c, n) or 0 for n in names) / (_rate(c, "cudnn") or math.nan) for c in sweep]


def _ratio_summary(ratios: list[float]) -> str:
    return f"geometric mean {_geomean(ratios):.2f}, lowest {min(ratios):.2f}, highest {max(ratios):.2f}"


def gluon_answer() -> str:
    """The page's answer for the Gluon kernel: at the standard shape, its fastest step against cuDNN and the
    Triton kernel, causal and not; then the default step against cuDNN over the sweep's shapes."""
    rec = _gluon()
    lines = []
    for case in (c for c in rec.cases if c.group == "standard"):
        best, rate, cudnn = _fastest(case)
        tl = _rate(case, "tl") or math.nan
        kind = "causal" if case.causal else "non-causal"
        lines.append(f"- Forward, {kind}: {rate:.0f} TFLOP/s ({best}), {rate / cudnn:.2f}× "
                     f"cuDNN ({cudnn:.0f}), {rate / tl:.2f}× the Triton kernel ({tl:.0f}); "
                     f"time per call {_iqr(case, 'gluon ' + best)}, cuDNN's {_iqr(case, 'cudnn')}.")  # fmt: skip
    default = _default_step()
    ratios = _sweep_ratios(rec, default)
    lines.append(f"- Over the {len(ratios)} shapes of the sweep below, the default step ({default}) ÷ cuDNN: "
                 f"{_ratio_summary(ratios)}.")  # fmt: skip
    gpu = rec.run.gpu.name if rec.run.gpu else "an unrecorded GPU"
    return "\n".join(lines) + f"\n\nAll of them timed in one run, on an {gpu}."


def _ptxas_note(line: str) -> str:
    """``"C7514: wgmma.mma_async instructions are serialized"`` from ptxas's performance note."""
    code = line.split("(", 1)[1].split(")", 1)[0] if "(" in line else ""
    what = line.split("Performance Loss: ", 1)[-1].split(" due to", 1)[0]
    return f"{code}: {what}" if code else what


def gluon_steps() -> str:
    """The Gluon steps at the standard shape: what each adds, how it compiled (registers per thread of the whole
    program, spills, shared memory, ptxas's performance note), its rate and its ratio to cuDNN, causal and not;
    then the Triton kernel and the SDPA backends, timed in the same rounds."""
    rec = _gluon()
    standard = {c.causal: c for c in rec.cases if c.group == "standard"}
    builds = {b.step: b for b in rec.builds}
    rows = []
    for name in [t.name for t in standard[False].timings]:
        step = name.removeprefix("gluon ")
        build = builds.get(step)
        cells = []
        for causal in (False, True):
            rate, cudnn = _rate(standard[causal], name), _rate(standard[causal], "cudnn")
            cells += [_fmt(rate), "-" if rate is None or cudnn is None else f"{rate / cudnn:.2f}"]
        if build is None:
            rows.append([name, "-", "-", "-", *cells])
            continue
        notes = [_ptxas_note(n) for n in build.ptxas if "Performance" in n]
        compiled = f"{build.registers} regs, {build.spills} spills, {build.shared_bytes // 1024} KiB shared"
        rows.append([name, build.description, compiled, ", ".join(notes) or "-", *cells])
    headers = ["implementation", "what it adds", "compiled (D=128)", "ptxas note", "TFLOP/s", "÷ cuDNN",
               "TFLOP/s causal", "÷ cuDNN causal"]  # fmt: skip
    return measured_table(headers, rows, rec.run)


def gluon_sweep() -> str:
    """Every recorded shape: TFLOP/s of the Gluon steps swept, the Triton kernel and each backend, and the fastest
    Gluon step's ratio to cuDNN."""
    rec = _gluon()
    rows = []
    names = _gluon_names(next(c for c in rec.cases if c.group == "sweep"))
    for c in (c for c in rec.cases if c.group == "sweep"):
        heads = f"{c.heads}" if c.heads == c.kv_heads else f"{c.heads}/{c.kv_heads}"
        best = max((_rate(c, n) or 0) for n in names)
        cudnn = _rate(c, "cudnn")
        rows.append([f"B={c.batch}, H={heads}, S={c.seq}, D={c.head_dim}{', causal' if c.causal else ''}",
                     *(_fmt(_rate(c, n)) for n in names), _fmt(_rate(c, "tl")),
                     *(_fmt(_rate(c, n)) for n in BACKENDS), f"{best / cudnn:.2f}"])  # fmt: skip
    ratios, default = _sweep_ratios(rec), _default_step()
    headers = ["shape", *(n.removeprefix("gluon ") for n in names), "tl", *BACKENDS, "fastest Gluon ÷ cuDNN"]
    summary = (f"Fastest Gluon step ÷ cuDNN over the {len(ratios)} shapes: {_ratio_summary(ratios)}; the default "
               f"step ({default}) alone: {_ratio_summary(_sweep_ratios(rec, default))}.")  # fmt: skip
    return measured_table(headers, rows, rec.run, summary + "\n\n")


#: Nsight Compute's readings the page shows, in its order.
PROFILE_METRICS = ("grid", "threads per block", "Duration", "Elapsed Cycles", "SM Frequency", "Compute (SM) Throughput",
                   "Issued Ipc Active",
                   "Issue Slots Busy", "Warp Cycles Per Issued Instruction", "Achieved Occupancy",
                   "Block Limit Registers", "L2 Cache Throughput", "DRAM Throughput")  # fmt: skip


def gluon_profile() -> str:
    """Nsight Compute's readings of the profiled implementations at the standard shape, not causal."""
    rec = _gluon()
    names = list(rec.profile)
    rows = [[m, *(rec.profile[n].get(m, "-") for n in names)] for m in PROFILE_METRICS]
    kernels = "; ".join(f"{n}: `{rec.profile[n].get('kernel', '-')}`" for n in names)
    return measured_table(["reading", *names], rows, rec.run, f"Kernels: {kernels}.\n\n")


def _swept(rec: GluonForward) -> list[str]:
    """The Gluon steps a record timed on every shape of its sweep (names without ``"gluon "``)."""
    sweep = [c for c in rec.cases if c.group == "sweep"]
    return [n.removeprefix("gluon ") for n in _gluon_names(sweep[0]) if all(_rate(c, n) for c in sweep)]


def compared_step(records: list[GluonForward]) -> str:
    """The step two records are compared on: the default step if every record swept it and Nsight Compute read
    it, else, of the steps they all swept and read, the one with the best geometric mean over cuDNN in the
    first record's sweep."""
    common = [n for n in _swept(records[0]) if all(n in _swept(r) and n in r.profile for r in records)]
    if not common:
        raise ValueError("the records have no Gluon step in common that was swept and profiled")
    default = _default_step()
    if default in common:
        return default
    return max(common, key=lambda n: _geomean(_sweep_ratios(records[0], n)))


def gluon_on_h200() -> str:
    """The same benchmark on an H200 beside the H100's: the fastest step at the standard shape against cuDNN, the
    step both swept (:func:`compared_step`) over the sweep, the DRAM throughput Nsight Compute read for it, and
    the cards' clocks; then whether the steps both timed rank in the same order on both."""
    records = [_gluon(), _gluon(GLUON_FORWARD_H200_ID)]
    default = compared_step(records)
    columns = []
    for rec in records:
        standard = {c.causal: c for c in rec.cases if c.group == "standard"}
        cells = []
        for causal in (False, True):
            best, rate, cudnn = _fastest(standard[causal])
            cells.append(f"{best}: {rate:.0f} TFLOP/s, {rate / cudnn:.2f}× cuDNN ({cudnn:.0f})")
        ratios = _sweep_ratios(rec, default)
        cells.append(f"{_geomean(ratios):.2f} ({min(ratios):.2f} to {max(ratios):.2f})")
        cells.append(rec.profile.get(default, {}).get("DRAM Throughput", "-"))
        top = rec.run.clocks.get("start")
        cells.append("-" if top is None else f"{_fmt(top.max_sm_mhz)} MHz, {_fmt(top.max_mem_mhz)} MHz")
        columns.append(cells)
    labels = ["fastest step, non-causal", "fastest step, causal",
              f"{default} ÷ cuDNN over the sweep: geometric mean (lowest to highest)",
              f"DRAM throughput of {default} (Nsight Compute)", "top SM clock, top memory clock"]  # fmt: skip
    rows = [[label, *(col[i] for col in columns)] for i, label in enumerate(labels)]
    headers = ["at B=4, H=32, S=4096, D=128 unless said", *(r.run.gpu.name if r.run.gpu else "-" for r in records)]

    both = set.intersection(*(set(_gluon_names(next(c for c in r.cases if c.group == "standard"))) for r in records))

    def ranking(rec: GluonForward, causal: bool) -> list[str]:
        case = next(c for c in rec.cases if c.group == "standard" and c.causal == causal)
        return sorted((n for n in _gluon_names(case) if n in both), key=lambda n: _rate(case, n) or 0)

    same = all(ranking(records[0], causal) == ranking(records[1], causal) for causal in (False, True))
    order = ("The steps both runs timed rank in the same order on both cards, causal and not." if same else
             "The steps both runs timed do not rank in the same order on the two cards.")  # fmt: skip
    return measured_table(headers, rows, records[1].run, order + "\n\n")

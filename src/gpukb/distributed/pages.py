"""Markdown for the distributed-training pages; the only module of the chapter that returns page text.

Tables come from the chapter's data file (:mod:`gpukb.distributed.options`), from the library run while the site
is built (checkpointing probes on the CPU, the memory calculator, the ring simulation) and from the committed
records, read by id (:data:`gpukb.distributed.results.FSDP_SINGLE_GPU_ID` and the pages' ids): one function per
kind of table, whatever the number of GPUs of the record.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter

from gpukb import records
from gpukb.calculators import Field, calculator_html
from gpukb.cuda.tables import kib
from gpukb.distributed import checkpointing, collectives, memory
from gpukb.distributed import figures as distributed_figures
from gpukb.distributed.fsdp_config import mode_dtypes, plan
from gpukb.distributed.model import ModelConfig
from gpukb.distributed.options import facts, source
from gpukb.distributed.problems import problems as chapter_problems
from gpukb.distributed.results import (
    FSDP_INTERLEAVED_ID,
    FSDP_MODES_ID,
    FSDP_SINGLE_GPU_ID,
    CollectiveBandwidth,
    FsdpDtypes,
    FsdpTraining,
    TrainingRun,
)
from gpukb.figures import to_svg
from gpukb.measuring.stats import median_interval
from gpukb.problems import markdown as problems_markdown
from gpukb.tables import markdown_table

GIB = 2**30


def _cite(source_id: str) -> str:
    s = source(source_id)
    where = f"{s.path} " if s.path else ""
    return f"[{where}({s.version})]({s.url})"


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def _short_commits(version: str) -> str:
    """A version with its commit hashes cut to 12 hex digits (the link holds the whole pin): a 40-digit hash
    cannot wrap and would widen the table past the page."""
    return re.sub(r"\b([0-9a-f]{12})[0-9a-f]{28}\b", r"\1", _cell(version))


def sources_markdown() -> str:
    """Every primary source of the chapter, with its pinned version and the date it was checked."""
    rows = [
        [
            _cell(s.title),
            f"[{(s.path or s.version).replace('/', '/<wbr>')}]({s.url})",
            _short_commits(s.version),
            s.checked,
        ]
        for s in facts().source
    ]
    return markdown_table(["source", "file or document", "version", "checked"], rows)


def composer_modes_markdown(precision: str = "amp_bf16") -> str:
    """What FULL / DEFAULT / PURE set, as written in Composer and resolved for ``precision``."""
    written = {m.mode: m for m in facts().composer_mode}
    rows = []
    for mode, param, reduce, buffer in mode_dtypes(precision):
        m = written[mode]
        p = plan(mixed_precision=mode, precision=precision)
        policy = p.mp_policy()
        rows.append(
            [
                f"`{mode}`",
                f"{m.param_dtype} → {param or 'parameter dtype'}",
                f"{m.reduce_dtype} → {reduce or 'parameter dtype'}",
                f"{m.buffer_dtype} → {buffer or 'buffer dtype'}",
                f"`MixedPrecisionPolicy(param_dtype={policy.param_dtype}, reduce_dtype={policy.reduce_dtype})`",
                _cite(m.source),
            ]
        )
    headers = ["mixed_precision", "param_dtype", "reduce_dtype", "buffer_dtype", "FSDP2 policy (Composer)", "source"]
    return markdown_table(headers, rows)


def composer_keys_markdown() -> str:
    """The ``fsdp_config`` keys the notes quote and their neighbours: default and effect, with sources."""
    rows = [[f"`{k.key}`", f"`{k.default}`", _cell(k.effect), _cite(k.source)] for k in facts().composer_key]
    return markdown_table(["key", "default", "what it does", "source"], rows)


def fully_shard_signature() -> str:
    """``fully_shard``'s parameters and ``FSDPModule``'s setters in the installed torch, read by ``inspect`` when
    the site is built (the prose names each; a test fails when a torch adds one the page does not name)."""
    import inspect

    import torch
    from torch.distributed.fsdp import FSDPModule, fully_shard

    params = inspect.signature(fully_shard).parameters.values()
    positional = [p.name for p in params if p.kind is not p.KEYWORD_ONLY]
    keywords = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
    setters = sorted(m for m in dir(FSDPModule) if m.startswith("set_"))
    return (
        f"In torch {torch.__version__.split('+')[0]}: `fully_shard({', '.join(positional)}, *, "
        f"{', '.join(keywords)})`; the module it returns is an `FSDPModule` with "
        f"{', '.join(f'`{m}`' for m in setters)}.\n"
    )


def fsdp_map_markdown() -> str:
    """FSDP1 arguments and their FSDP2 counterparts (torchtitan's map)."""
    rows = [[_cell(m.fsdp1), _cell(m.fsdp2), _cell(m.note), _cite(m.source)] for m in facts().fsdp_map]
    return markdown_table(["FSDP1", "FSDP2", "note", "source"], rows)


def mp_fields_markdown() -> str:
    """The fields of FSDP1's ``MixedPrecision`` and FSDP2's ``MixedPrecisionPolicy``."""
    rows = [[f.api, f"`{f.field}`", f"`{f.default}`", _cell(f.meaning), _cite(f.source)] for f in facts().mp_field]
    return markdown_table(["class", "field", "default", "meaning", "source"], rows)


def dtype_flow_markdown(precision: str = "amp_bf16") -> str:
    """Where each dtype of a mode shows up in one FSDP2 step (each cell is asserted on two gloo ranks in CI)."""
    rows = []
    for mode, param, reduce, _ in mode_dtypes(precision):
        compute = param or "float32"
        rows.append([f"`{mode}`", compute, compute, compute, reduce or compute, "float32", "float32"])
    headers = [
        "mode",
        "params in forward",
        "all-gather",
        "unsharded grads",
        "reduce-scatter",
        "sharded grads (optimizer)",
        "sharded params (optimizer)",
    ]
    return markdown_table(headers, rows)


def checkpoint_default_markdown() -> str:
    """What the torch that builds this site does when ``use_reentrant`` is not passed, and what the GPU's torch
    did (from the one-GPU record)."""
    here = checkpointing.default_behaviour()
    rows = [
        [
            here["torch"],
            here["category"] or "-",
            _cell(here["message"] or "-"),
            "yes" if here["default_is_reentrant"] else "no",
        ]
    ]
    try:
        gpu = records.load(FSDP_SINGLE_GPU_ID, FsdpTraining).checkpoint_warning
        rows.append(
            [gpu.torch, gpu.category or "-", _cell(gpu.message or "-"), "yes" if gpu.default_is_reentrant else "no"]
        )
    except FileNotFoundError:
        pass
    return markdown_table(["torch", "category", "text", "runs reentrant"], rows)


def checkpoint_behaviours_markdown() -> str:
    """Each behaviour probed in the torch that builds the site."""
    headers, rows = checkpointing.behaviours()
    return markdown_table(headers, [[_cell(c) for c in r] for r in rows])


def checkpoint_memory_markdown() -> str:
    """Bytes held for backward and peak bytes of three checkpointed blocks on the CPU, with the formula's value."""
    headers, rows = checkpointing.memory_table()
    b, s, h, a, layers = 2, 16, 32, 4, 3
    full = memory.block_activation_bytes(b, s, h, a, 4)
    out = b * s * h * 4
    formula = {"none": layers * full + 4, "reentrant": layers * out + 4, "non-reentrant": layers * out + 4}
    return markdown_table([*headers, "formula"], [[*r, formula[r[0]]] for r in rows])


def states_markdown(world_size: int = 64, parameters: float = 7.5e9) -> str:
    """Bytes per parameter of each scheme at ``world_size`` ranks and GB per rank for ``parameters``."""
    headers, rows = memory.states_table(world_size, parameters)
    return markdown_table(headers, [[f"`{r[0]}`", *r[1:]] for r in rows])


def transients_markdown() -> str:
    """FSDP2's transient bytes per parameter of the unit being computed, by mode."""
    rows = []
    for mode, param, reduce, _ in mode_dtypes("amp_bf16"):
        rows.append(
            [
                f"`{mode}`",
                param or "float32",
                reduce or param or "float32",
                memory.fsdp2_unit_transient_bytes_per_param(param, reduce),
            ]
        )
    return markdown_table(["mode", "param_dtype", "reduce_dtype", "bytes per parameter of the unit"], rows)


def prediction(record: FsdpTraining, run) -> dict[str, float]:
    """The memory model (:func:`gpukb.distributed.memory.training_memory`) for one recorded run: model states,
    what one forward keeps (every block's activations or only its input, plus the head), and one block recomputed
    in backward."""
    m = memory.training_memory(
        ModelConfig(**record.model),
        record.batch,
        "fsdp2" if run.fsdp else "ddp_fp32",
        record.world_size,
        run.mixed_precision if run.fsdp else None,
        run.checkpointing != "none",
    )
    return {"states": m.states, "kept": m.kept, "recompute": m.recompute, "peak": m.peak}


def _key(run: TrainingRun) -> tuple[bool, str | None, str, str | None]:
    """What makes two runs the same configuration, whatever their names ("plain" on one rank is "DDP" on
    several)."""
    return run.fsdp, run.mixed_precision, run.checkpointing, run.autocast


def _same_configurations(record: FsdpTraining, other_id: str) -> tuple[FsdpTraining, dict[tuple, TrainingRun]]:
    """The record ``other_id`` and its runs by configuration, after checking that it trained the same model with
    the same batch per rank as ``record``."""
    other = records.load(other_id, FsdpTraining)
    if (other.model, other.batch, other.parameters) != (record.model, record.batch, record.parameters):
        raise ValueError(
            f"{other_id} trained {other.model} with batch {other.batch}, not {record.model} with batch {record.batch}"
        )
    return other, {_key(r): r for r in other.runs}


def memory_markdown(record_id: str = FSDP_SINGLE_GPU_ID, one_gpu_id: str | None = None) -> str:
    """Measured peak and activation bytes per GPU against the calculator (the runs without autocast); with
    ``one_gpu_id`` also what running on ``world_size`` ranks saves per GPU against that one-GPU record of the same
    model and batch, predicted and measured. On several ranks the peak is the largest rank's."""
    record = records.load(record_id, FsdpTraining)
    single = _same_configurations(record, one_gpu_id)[1] if one_gpu_id else {}
    rows = []
    for run in record.runs:
        if run.autocast is not None:
            continue
        p = prediction(record, run)
        row = [
            run.name,
            f"{p['kept'] / GIB:.3f}",
            f"{run.activation_bytes / GIB:.3f}",
            f"{p['peak'] / GIB:.2f}",
            f"{run.peak_bytes / GIB:.2f}",
            f"{(run.peak_bytes - p['peak']) / GIB:.2f}",
        ]
        if one_gpu_id:
            one = single[_key(run)]
            alone = prediction(records.load(one_gpu_id, FsdpTraining), one)
            row += [f"{(alone['peak'] - p['peak']) / GIB:.3f}", f"{(one.peak_bytes - run.peak_bytes) / GIB:.3f}"]
        rows.append(row)
    headers = [
        "configuration",
        "forward keeps, predicted (GiB)",
        "forward keeps, measured (GiB)",
        "peak, predicted (GiB)",
        "peak, measured (GiB)",
        "not predicted (GiB)",
    ]
    if one_gpu_id:
        headers += ["saved vs one GPU, predicted (GiB)", "saved vs one GPU, measured (GiB)"]
    return markdown_table(headers, rows) + "\n\n" + records.measured_on(record.run)


def ddp_buckets_markdown(record_id: str, one_gpu_id: str) -> str:
    """How much of DDP's extra peak over plain training on one GPU its gradient buckets explain: with the default
    ``gradient_as_bucket_view=False`` they are a float32 copy of every gradient, 4 bytes per parameter."""
    record = records.load(record_id, FsdpTraining)
    _, single = _same_configurations(record, one_gpu_id)
    run = next(r for r in record.runs if not r.fsdp and r.autocast is None and r.checkpointing == "none")
    extra = run.peak_bytes - single[_key(run)].peak_bytes
    buckets = 4 * record.parameters
    return (
        f"DDP's peak per GPU was {extra / GIB:.3f} GiB above plain training's on one GPU. Its buckets, a float32 "
        f"copy of the {record.parameters / 1e6:.0f} M gradients, are {buckets / GIB:.3f} GiB of it "
        f"({buckets / extra:.0%}); the other {(extra - buckets) / GIB:.3f} GiB this run does not attribute.\n"
    )


def throughput_markdown(record_id: str = FSDP_SINGLE_GPU_ID, one_gpu_id: str | None = None) -> str:
    """Tokens/s of every configuration: the median of the repeats, with min and max.

    Alone, each median against FSDP2 DEFAULT without checkpointing, and the last loss. With ``one_gpu_id`` (a
    one-GPU record of the same model and batch per rank), the spread of the repeats ((max - min) / median), the
    one-GPU median of the same configuration and the ratio of the two medians: the scaling.
    """
    record = records.load(record_id, FsdpTraining)
    reference = next(r for r in record.runs if r.mixed_precision == "DEFAULT" and r.checkpointing == "none")
    ref = statistics.median(reference.tokens_per_s)
    single = _same_configurations(record, one_gpu_id)[1] if one_gpu_id else {}
    rows = []
    for run in record.runs:
        med = statistics.median(run.tokens_per_s)
        row = [run.name, f"{med:,.0f}", f"{min(run.tokens_per_s):,.0f} – {max(run.tokens_per_s):,.0f}"]
        if one_gpu_id:
            alone = statistics.median(single[_key(run)].tokens_per_s)
            spread = (max(run.tokens_per_s) - min(run.tokens_per_s)) / med
            row += [f"{100 * spread:.1f}%", f"{alone:,.0f}", f"{med / alone:.2f}"]
        else:
            row += [f"{med / ref:.2f}", f"{run.loss_last:.3f}"]
        rows.append(row)
    headers = ["configuration", "tokens/s (median)", "min – max of repeats"]
    if one_gpu_id:
        headers += ["spread", "one GPU, tokens/s (median)", "× one GPU"]
    else:
        headers += ["vs FSDP2 DEFAULT", "last loss"]
    config = ModelConfig(**record.model)
    n = record.world_size
    intro = (
        f"{record.parameters / 1e6:.0f}M parameters ({config.layers} blocks, width {config.hidden}, "
        f"{config.heads} heads, vocabulary {config.vocab}), batch {record.batch} × {config.seq} tokens"
        f"{' per rank' if n > 1 else ''}, "
        f"{len(reference.tokens_per_s)} timed repeats of {record.steps} steps after {record.warmup} warm-up steps, "
        f"world size {n}."
    )
    if n > 1:
        intro += " Tokens/s counts the tokens of every rank; each repeat lasts as long as its slowest rank."
    if one_gpu_id:
        counts = sorted({len(r.tokens_per_s) for r in single.values()})
        intro += f" The one-GPU medians are of {' or '.join(map(str, counts))} repeats."
    return intro + "\n\n" + markdown_table(headers, rows) + "\n\n" + records.measured_on(record.run)


def ring_traffic_markdown(size_bytes: int = 1 << 20, ranks: tuple[int, ...] = (2, 4, 8, 16)) -> str:
    """Bytes each rank sends in the simulated ring all-reduce, against 2(p − 1)/p · S."""
    headers, rows = collectives.ring_traffic_table(size_bytes, list(ranks))
    return markdown_table(headers, rows)


def bus_factors_markdown(ranks: tuple[int, ...] = (2, 4, 8)) -> str:
    """nccl-tests' bus-bandwidth factor of each collective for a few rank counts."""
    rows = [[f"`{op}`", *(f"{collectives.bus_factor(op, n):.4g}" for n in ranks)] for op in collectives.BUS_FACTORS]
    return markdown_table(["collective", *(f"n = {n}" for n in ranks)], rows)


def block_check_markdown() -> str:
    """Bytes one block's forward left alive on the GPU (recorded) against the formula with 4-byte LayerNorm
    statistics."""
    record = records.load(FSDP_SINGLE_GPU_ID, FsdpTraining)
    rows = []
    for b in record.blocks:
        element = 4 if b.dtype == "float32" else 2
        saved = b.live_bytes - b.output_bytes + b.input_bytes
        formula = memory.block_activation_bytes(b.batch, b.seq, b.hidden, b.heads, element, stats_bytes=4)
        rows.append(
            [b.dtype, f"{b.batch} × {b.seq} × {b.hidden}, {b.heads} heads", saved, formula, f"{saved / formula:.4f}"]
        )
    headers = ["dtype", "shape", "saved bytes (measured)", "formula", "measured / formula"]
    return markdown_table(headers, rows) + "\n\n" + records.measured_on(record.run)


def interleaved_markdown(record_id: str = FSDP_INTERLEAVED_ID) -> str:
    """The bfloat16 configurations trained afresh in interleaved rounds: tokens/s of each round, the median, and
    the ratio of each round to training without FSDP, with autocast, in the same round ("plain" on one rank,
    DDP on several)."""
    record = records.load(record_id, FsdpTraining)
    reference = next(r for r in record.runs if not r.fsdp)
    rounds = len(reference.tokens_per_s)
    rows = []
    for run in record.runs:
        ratios = [t / ref for t, ref in zip(run.tokens_per_s, reference.tokens_per_s, strict=True)]
        rows.append(
            [
                run.name,
                *(f"{t:,.0f}" for t in run.tokens_per_s),
                f"{statistics.median(run.tokens_per_s):,.0f}",
                " / ".join(f"{r:.2f}" for r in ratios),
            ]
        )
    headers = [
        "configuration",
        *(f"round {i + 1} (tokens/s)" for i in range(rounds)),
        "median",
        f"vs {reference.name.split(' / ')[0]}+autocast, per round",
    ]
    return markdown_table(headers, rows) + "\n\n" + records.measured_on(record.run)


def _paired_modes(record: FsdpTraining, first: str = "DEFAULT", second: str = "PURE") -> tuple[list, list, list]:
    """Tokens/s of two FSDP modes (no checkpointing) in each round of a record, and their per-round ratio."""
    by_mode = {r.mixed_precision: r.tokens_per_s for r in record.runs if r.fsdp and r.checkpointing == "none"}
    missing = [m for m in (first, second) if m not in by_mode]
    if missing:
        raise ValueError(f"{record.run.command}: no run of mode(s) {missing}; it has {sorted(by_mode)}")
    a, b = by_mode[first], by_mode[second]
    return a, b, [y / x for x, y in zip(a, b, strict=True)]


def modes_answer(record_id: str = FSDP_MODES_ID) -> str:
    """One sentence: PURE's tokens/s over DEFAULT's, the median of paired rounds and its confidence interval."""
    record = records.load(record_id, FsdpTraining)
    _, _, ratios = _paired_modes(record)
    low, high, coverage = median_interval(ratios)
    median = statistics.median(ratios)
    return (
        f"On {record.world_size} H100s, PURE trained the {record.parameters / 1e6:,.0f}M-parameter model at "
        f"**{median:.3f}×** DEFAULT's tokens/s (median of {len(ratios)} paired rounds; {coverage:.0%} confidence "
        f"interval {low:.3f}× to {high:.3f}×): {median - 1:+.0%}, "
        + ("an interval that stops below the 5% at which the claimed 5–15% begins."
           if high < 1.05 else f"an interval that reaches {high - 1:+.0%}.")
    )  # fmt: skip


def modes_markdown(record_id: str = FSDP_MODES_ID) -> str:
    """DEFAULT and PURE trained afresh in each round, in alternating order: tokens/s of each and their ratio,
    with the median ratio and its distribution-free confidence interval, and each mode's peak memory."""
    record = records.load(record_id, FsdpTraining)
    a, b, ratios = _paired_modes(record)
    rows = [[i + 1, "DEFAULT, PURE" if i % 2 == 0 else "PURE, DEFAULT", f"{x:,.0f}", f"{y:,.0f}", f"{r:.3f}"]
            for i, (x, y, r) in enumerate(zip(a, b, ratios, strict=True))]  # fmt: skip
    low, high, coverage = median_interval(ratios)
    rows.append(["median", "", f"{statistics.median(a):,.0f}", f"{statistics.median(b):,.0f}",
                 f"{statistics.median(ratios):.3f} ({coverage:.0%} interval {low:.3f} to {high:.3f})"])  # fmt: skip
    peaks = {r.mixed_precision: r.peak_bytes for r in record.runs if r.fsdp}
    table = markdown_table(["round", "order", "DEFAULT tokens/s", "PURE tokens/s", "PURE / DEFAULT"], rows)
    memory = ", ".join(f"{mode} {peak / 2**30:.2f} GiB" for mode, peak in peaks.items())
    # 6 FLOPs per parameter per token (forward and backward matmuls) is a lower bound: attention adds more
    flops = 6 * record.parameters * statistics.median(a + b) / record.world_size / 1e12
    return (f"{table}\n\nPeak memory per GPU: {memory}. Each GPU ran at least {flops:,.0f} TFLOP/s of model "
            f"matmuls (6 × parameters × tokens/s per GPU): the step is spent in the GPUs, not the host."
            f"\n\n{records.measured_on(record.run)} {' '.join(record.run.notes)}")  # fmt: skip


def _calls(dtypes: list[str]) -> str:
    """``["bfloat16"] * 4`` as ``4 × bfloat16``; several dtypes joined with ``+``."""
    return " + ".join(f"{n} × {d}" for d, n in Counter(dtypes).items()) or "none"


def fsdp_dtypes_markdown(record_id: str) -> str:
    """The dtypes FSDP2 used under each mode, as every rank of a recorded run saw them
    (``bench/distributed_dtypes.py``): parameters in forward, unsharded gradients, the all-gathers and reduce-scatters
    it called, and the sharded gradients the optimizer got."""
    record = records.load(record_id, FsdpDtypes)
    order = {"FULL": 0, "DEFAULT": 1, "PURE": 2}
    rows = []
    for c in sorted(record.captures, key=lambda c: (order[c.mode], c.rank)):
        ops = [(x.op, x.dtype) for x in c.collectives]
        rows.append(
            [
                f"`{c.mode}`",
                c.rank,
                " / ".join(dict.fromkeys(c.forward_params)),
                " / ".join(dict.fromkeys(c.unsharded_grads)),
                _calls([d for op, d in ops if op.startswith("all_gather")]),
                _calls([d for op, d in ops if op.startswith("reduce_scatter")]),
                " / ".join(dict.fromkeys(c.sharded_grads)),
            ]
        )
    headers = [
        "mode",
        "rank",
        "params in forward",
        "unsharded grads",
        "all-gathers",
        "reduce-scatters",
        "sharded grads (optimizer)",
    ]
    where = f"{record.world_size} ranks, {record.backend.upper()}, device {record.device}. "
    return markdown_table(headers, rows) + "\n\n" + where + records.measured_on(record.run)


# --- collectives on several GPUs ------------------------------------------------------------------------------------

#: H100's NVLink between two GPUs, as NCCL's Sylvain Jeaugey put it (NVIDIA/nccl-tests#212, 2024-05-06): 450 GB/s
#: each way is the line rate of its 18 links; less about 20% of protocol overhead NCCL gets an effective 370 GB/s,
#: seen as busbw of operations other than all-reduce, or with ``NCCL_ALGO=RING``.
H100_NVLINKS = 18
H100_NVLINK_LINE_GBPS = 450
NCCL_H100_NVLINK_GBPS = 370

_OP_NAMES = {"all_reduce": "all-reduce", "reduce_scatter": "reduce-scatter", "all_gather": "all-gather"}


def _without_ansi(text: str) -> str:
    """``nvidia-smi topo -m`` underlines its header with terminal escape codes; they are no text."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def nvlinks(record: CollectiveBandwidth) -> int | None:
    """How many bonded NVLinks join the GPUs (``NV18`` in ``nvidia-smi topo -m``), or ``None`` when the record
    shows none."""
    found = re.search(r"\bNV(\d+)\b", _without_ansi(record.topology or ""))
    return int(found.group(1)) if found else None


def _powers_of(factor: int, sizes: list[int]) -> list[int]:
    """The sizes that are the smallest times a power of ``factor``."""
    shown = []
    for s in sizes:
        q, r = divmod(s, sizes[0])
        while r == 0 and q % factor == 0:
            q //= factor
        if r == 0 and q == 1:
            shown.append(s)
    return shown


def machine_markdown(record_id: str) -> str:
    """Where a multi-GPU collectives record ran: ranks, backend, the link between the GPUs, and the run line."""
    record = records.load(record_id, CollectiveBandwidth)
    links = nvlinks(record)
    if links == H100_NVLINKS:
        link = (
            f"`nvidia-smi topo -m` shows `NV{links}` between them, in its legend a connection traversing a bonded set "
            f"of {links} NVLinks. An H100 SXM has {H100_NVLINKS} NVLinks in all, and on the HGX H100 8-GPU board they "
            "do not join two GPUs directly: each GPU connects to all four NVSwitch chips of the board, which connect "
            "every GPU to every other "
            "([NVIDIA, Introducing NVIDIA HGX H100](https://developer.nvidia.com/blog/introducing-nvidia-hgx-h100-an-"
            "accelerated-server-platform-for-ai-and-high-performance-computing/), read 2026-11-27). So the two GPUs "
            "talk through the switches, at the bandwidth of all of one GPU's links; with eight GPUs each GPU's links "
            "carry its traffic to all seven others. "
        )
    elif links:
        link = f"`nvidia-smi topo -m` shows `NV{links}` between them, a bonded set of {links} NVLinks. "
    else:
        link = "The record shows no NVLink between them. "
    return (
        f"{record.world_size} ranks, one GPU each, {record.backend.upper()}. " + link + records.measured_on(record.run)
    )


def collective_bandwidth_markdown(record_id: str, factor: int = 4) -> str:
    """Time, algbw and busbw (nccl-tests' definitions, GB/s = 10⁹ bytes/s) of each recorded collective at the sizes
    that are the smallest times a power of ``factor``."""
    record = records.load(record_id, CollectiveBandwidth)
    ops = list(dict.fromkeys(r.op for r in record.rows))
    by = {(r.op, r.size_bytes): r for r in record.rows}
    sizes = sorted({r.size_bytes for r in record.rows})
    rows = []
    for s in _powers_of(factor, sizes):
        row = [kib(s)]
        for op in ops:
            r = by[op, s]
            row += [f"{r.ms.median * 1e3:.1f}", f"{r.algbw / 1e9:.2f}", f"{r.busbw / 1e9:.2f}"]
        rows.append(row)
    headers = ["size S"]
    for op in ops:
        headers += [f"{_OP_NAMES[op]} µs", f"{_OP_NAMES[op]} algbw (GB/s)", f"{_OP_NAMES[op]} busbw (GB/s)"]
    windows = "" if record.repeats == 1 else f", in each of {record.repeats} windows: the median window"
    how = (
        f"{record.dtype}, {record.world_size} ranks, {record.backend.upper()}; {record.warmup} warm-up calls, then "
        f"the mean of {record.iters} calls of the slowest rank{windows}. Measured at {len(sizes)} sizes from "
        f"{kib(sizes[0])} to {kib(sizes[-1])}; shown: each size {factor} times the one before. "
    )
    return markdown_table(headers, rows) + "\n\n" + how + records.measured_on(record.run)


def alpha_beta_markdown(record_id: str) -> str:
    """The α-β model fitted to each recorded collective: α, B, the size S½ below which α is more than half the
    time, and the model's worst relative error (with the size it occurs at). The smallest size is left out of the
    fit and of the errors: the run's very first call (an all-reduce of it) still carried first-call costs."""
    record = records.load(record_id, CollectiveBandwidth)
    rows = []
    for op in dict.fromkeys(r.op for r in record.rows):
        measured = sorted((r for r in record.rows if r.op == op), key=lambda r: r.size_bytes)[1:]
        factor = collectives.bus_factor(op, record.world_size)
        seconds = [r.ms.median / 1e3 for r in measured]  # the median window, per call
        alpha, bandwidth = collectives.fit_alpha_beta([r.size_bytes for r in measured], seconds, factor)
        errors = [(collectives.alpha_beta_time(r.size_bytes, alpha, bandwidth, factor) / s - 1, r.size_bytes)
                  for r, s in zip(measured, seconds, strict=True)]  # fmt: skip
        worst, at = max(errors, key=lambda e: abs(e[0]))
        rows.append([_OP_NAMES[op], f"{alpha * 1e6:.1f}", f"{bandwidth / 1e9:.0f}",
                     f"{alpha * bandwidth / factor / 2**20:.1f}", f"{worst:+.0%} at {kib(at)}"])  # fmt: skip
    headers = ["collective", "α (µs)", "B (GB/s)", "S½ (MiB)", "worst error of the model"]
    first = min(r.size_bytes for r in record.rows)
    sizes = sorted({r.size_bytes for r in record.rows})
    return (
        markdown_table(headers, rows)
        + f"\n\nFitted to the {len(sizes) - 1} sizes from {kib(sizes[1])} to {kib(sizes[-1])} of each collective "
        f"({kib(first)} left out: the run's first call, an all-reduce of that size, was slower than the calls after "
        "it).\n"
    )


def link_comparison_markdown(record_id: str) -> str:
    """Each collective's busbw at the largest size against H100's NVLink line rate per direction and NCCL's
    effective NVLink bandwidth on H100."""
    record = records.load(record_id, CollectiveBandwidth)
    links = nvlinks(record)
    if links != H100_NVLINKS:
        raise ValueError(
            f"{record_id} shows {links or 'no'} NVLinks between its GPUs; the rates compared with are H100's "
            f"({H100_NVLINKS} links)"
        )
    line = H100_NVLINK_LINE_GBPS
    largest = max(r.size_bytes for r in record.rows)
    rows = []
    for r in record.rows:
        if r.size_bytes == largest:
            busbw = r.busbw / 1e9
            rows.append(
                [
                    _OP_NAMES[r.op],
                    kib(r.size_bytes),
                    f"{busbw:.1f}",
                    f"{100 * busbw / line:.0f}%",
                    f"{100 * busbw / NCCL_H100_NVLINK_GBPS:.0f}%",
                ]
            )
    headers = [
        "collective",
        "size S",
        "busbw (GB/s)",
        f"of the line rate, {line} GB/s",
        f"of NCCL's ~{NCCL_H100_NVLINK_GBPS} GB/s",
    ]
    return markdown_table(headers, rows)


def collective_figure(record_id: str) -> str:
    """busbw against size for each recorded collective (inline SVG), with the links' rate per direction and NCCL's
    effective NVLink bandwidth as horizontal lines."""
    from gpukb.figures import new_figure, to_svg

    record = records.load(record_id, CollectiveBandwidth)
    fig, ax = new_figure(7.0, 3.8)
    for op in dict.fromkeys(r.op for r in record.rows):
        rows = sorted((r for r in record.rows if r.op == op), key=lambda r: r.size_bytes)
        ax.plot([r.size_bytes for r in rows], [r.busbw / 1e9 for r in rows], marker=".", label=_OP_NAMES[op])
    if nvlinks(record) == H100_NVLINKS:
        line = H100_NVLINK_LINE_GBPS
        ax.axhline(line, color="black", linestyle="--", linewidth=1, label=f"NVLink line rate, one way ({line})")
    ax.axhline(
        NCCL_H100_NVLINK_GBPS, color="grey", linestyle=":", linewidth=1, label=f"NCCL's ~{NCCL_H100_NVLINK_GBPS}"
    )
    ax.set_xscale("log", base=2)
    ticks = _powers_of(16, sorted({r.size_bytes for r in record.rows}))
    ax.set_xticks(ticks, [kib(t) for t in ticks])
    ax.set_xlabel("size S")
    ax.set_ylabel("busbw (GB/s)")
    ax.legend(loc="center left")
    return to_svg(fig)


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.distributed.problems`)."""
    return problems_markdown(chapter_problems())


def ring_figure() -> str:
    """Inline SVG: the simulated ring all-reduce on four ranks, step by step."""
    return to_svg(distributed_figures.ring_figure())


def fsdp_figure() -> str:
    """Inline SVG: one FSDP training step, unit by unit, with the measured model's bytes per unit."""
    return to_svg(distributed_figures.fsdp_figure())


# --- the calculator ------------------------------------------------------------------------------------------

#: The memory runs a calculator's prediction is shown beside when its inputs match one (one GPU, two GPUs).
MEMORY_RECORDS = ("distributed/fsdp-memory", "distributed/fsdp-memory-h100x2")


def matching_runs(
    config: ModelConfig,
    batch: int,
    scheme: str,
    world_size: int,
    mixed_precision: str | None,
    checkpointing: bool,
    record_ids: tuple[str, ...] = MEMORY_RECORDS,
) -> list[tuple[str, TrainingRun]]:
    """The recorded runs (without autocast) whose configuration the calculator's inputs match: the same model, batch
    per GPU and number of GPUs, FSDP2 with the same mode (``fsdp2``) or plain/DDP float32 training (``ddp_fp32``),
    and checkpointing on or off as they were; ``(record id, run)`` pairs."""
    found = []
    for record_id in record_ids:
        record = records.load(record_id, FsdpTraining)
        if (ModelConfig(**record.model), record.batch, record.world_size) != (config, batch, world_size):
            continue
        for run in record.runs:
            if run.autocast is not None or (run.checkpointing != "none") != checkpointing:
                continue
            fsdp = scheme == "fsdp2" and run.fsdp and run.mixed_precision == mixed_precision
            if fsdp or (scheme == "ddp_fp32" and not run.fsdp):
                found.append((record_id, run))
    return found


def memory_calculator(record_ids: tuple[str, ...] = MEMORY_RECORDS) -> str:
    """Training memory per GPU: :func:`gpukb.distributed.memory.training_memory` computed in the browser, with the
    schemes and modes exported from :mod:`gpukb.distributed.memory` and the recorded memory runs shown beside a
    prediction whose inputs match one."""
    loaded = [records.load(r, FsdpTraining) for r in record_ids]
    run_fields = ("name", "fsdp", "mixed_precision", "checkpointing", "autocast", "peak_bytes", "activation_bytes")
    data = {
        "schemes": list(memory.SCHEMES),
        "fsdp2_activation_bytes": dict(memory.FSDP2_ACTIVATION_BYTES),
        "records": [
            {
                "id": rid,
                "gpu": f"{r.world_size}× {r.run.gpu.name}" if r.run.gpu else f"{r.world_size} GPU(s)",
                "model": r.model,
                "batch": r.batch,
                "world_size": r.world_size,
                "runs": [{f: getattr(run, f) for f in run_fields} for run in r.runs],
            }
            for rid, r in zip(record_ids, loaded, strict=True)
        ],
    }
    model, record = ModelConfig(**loaded[-1].model), loaded[-1]
    modes = [("", "none (not FSDP2)"), *((m, m) for m in memory.FSDP2_ACTIVATION_BYTES)]
    fields = [
        Field("scheme", "scheme", "select", "fsdp2", [(s, f"{s}: {text}") for s, text in memory.SCHEMES.items()]),
        Field("mixed_precision", "mixed_precision (FSDP2)", "select", "DEFAULT", modes),
        Field("world_size", "world_size (GPUs)", default=str(record.world_size)),
        Field("checkpointing", "activation checkpointing", "checkbox"),
        Field("batch", "batch (sequences per GPU)", default=str(record.batch)),
        Field("vocab", "vocab", default=str(model.vocab)),
        Field("seq", "seq", default=str(model.seq)),
        Field("hidden", "hidden", default=str(model.hidden)),
        Field("heads", "heads", default=str(model.heads)),
        Field("layers", "layers", default=str(model.layers)),
    ]
    return calculator_html("memory", "Training memory per GPU", fields, data)

"""Markdown for the distributed-training pages; the only module of the chapter that returns page text.

Tables come from the chapter's data file (:mod:`gpukb.distributed.options`), from the library run while the site
is built (checkpointing probes on the CPU, the memory calculator, the ring simulation) and from the committed
records (:data:`gpukb.distributed.results.FSDP_SINGLE_GPU_ID`).
"""

from __future__ import annotations

import re
import statistics

from gpukb import records
from gpukb.distributed import checkpointing, collectives, memory
from gpukb.distributed.fsdp_config import mode_dtypes, plan
from gpukb.distributed.model import ModelConfig
from gpukb.distributed.options import facts, source
from gpukb.distributed.results import FSDP_SINGLE_GPU_ID, FsdpTraining
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
    """The memory model for one recorded run: model states (16 bytes per parameter on one rank), what one forward
    keeps (every block's activations or only its input, plus the head), and one block recomputed in backward."""
    config = ModelConfig(**record.model)
    element = 2 if (run.fsdp and run.mixed_precision != "FULL") else 4
    acts = memory.model_activation_bytes(config, record.batch, element, run.checkpointing != "none")
    scheme = "fsdp2" if run.fsdp else "ddp_fp32"
    states = memory.state_bytes_per_param(scheme, record.world_size)["total"] * record.parameters
    kept = acts["blocks"] + acts["head"]
    return {"states": states, "kept": kept, "recompute": acts["recompute"], "peak": states + kept + acts["recompute"]}


def single_gpu_memory_markdown(record_id: str = FSDP_SINGLE_GPU_ID) -> str:
    """Measured peak and activation bytes on the GPU against the calculator (the runs without autocast)."""
    record = records.load(record_id, FsdpTraining)
    rows = []
    for run in record.runs:
        if run.autocast is not None:
            continue
        p = prediction(record, run)
        rows.append(
            [
                run.name,
                f"{p['kept'] / GIB:.3f}",
                f"{run.activation_bytes / GIB:.3f}",
                f"{p['peak'] / GIB:.2f}",
                f"{run.peak_bytes / GIB:.2f}",
                f"{(run.peak_bytes - p['peak']) / GIB:.2f}",
            ]
        )
    headers = [
        "configuration",
        "forward keeps, predicted (GiB)",
        "forward keeps, measured (GiB)",
        "peak, predicted (GiB)",
        "peak, measured (GiB)",
        "not predicted (GiB)",
    ]
    return markdown_table(headers, rows) + "\n\n" + records.measured_on(record.run)


def single_gpu_throughput_markdown() -> str:
    """Tokens/s (median of the repeats, with min and max) and peak memory of every configuration."""
    record = records.load(FSDP_SINGLE_GPU_ID, FsdpTraining)
    reference = next(r for r in record.runs if r.mixed_precision == "DEFAULT" and r.checkpointing == "none")
    ref = statistics.median(reference.tokens_per_s)
    rows = []
    for run in record.runs:
        med = statistics.median(run.tokens_per_s)
        rows.append(
            [
                run.name,
                f"{med:,.0f}",
                f"{min(run.tokens_per_s):,.0f} – {max(run.tokens_per_s):,.0f}",
                f"{med / ref:.2f}",
                f"{run.loss_last:.3f}",
            ]
        )
    headers = [
        "configuration",
        "tokens/s (median)",
        "min – max of repeats",
        "vs FSDP2 DEFAULT",
        "last loss",
    ]
    config = ModelConfig(**record.model)
    intro = (
        f"{record.parameters / 1e6:.0f}M parameters ({config.layers} blocks, width {config.hidden}, "
        f"{config.heads} heads, vocabulary {config.vocab}), batch {record.batch} × {config.seq} tokens, "
        f"{len(reference.tokens_per_s)} timed repeats of {record.steps} steps after {record.warmup} warm-up steps, "
        f"world size {record.world_size}."
    )
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


def single_gpu_interleaved_markdown() -> str:
    """The bfloat16 configurations trained afresh in interleaved rounds: tokens/s of each round, the median, and
    the ratio of each round to plain training with autocast in the same round."""
    from gpukb.distributed.results import FSDP_INTERLEAVED_ID

    record = records.load(FSDP_INTERLEAVED_ID, FsdpTraining)
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
        "vs plain+autocast, per round",
    ]
    return markdown_table(headers, rows) + "\n\n" + records.measured_on(record.run)

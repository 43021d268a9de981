"""The distributed-training chapter's page layer: one module per page, the only code of the chapter that returns
page text.

Tables come from the chapter's data file (:mod:`gpukb.distributed.options`), from the library run while the site
is built (checkpointing probes on the CPU, the memory calculator, the ring simulation) and from the committed
records, read by id (:data:`gpukb.distributed.results.FSDP_SINGLE_GPU_ID` and the pages' ids): one function per
kind of table, whatever the number of GPUs of the record. This package holds the tables the one-GPU and two-GPU
pages both show (memory, throughput, interleaving, the machine).
"""

from __future__ import annotations

import re
import statistics

from gpukb import records
from gpukb.distributed import memory as memory_model  # not `memory`: the memory page module takes that name here
from gpukb.distributed.model import ModelConfig
from gpukb.distributed.results import (
    FSDP_INTERLEAVED_ID,
    FSDP_SINGLE_GPU_ID,
    CollectiveBandwidth,
    FsdpTraining,
    TrainingRun,
)

GIB = 2**30


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def prediction(record: FsdpTraining, run) -> dict[str, float]:
    """The memory model (:func:`gpukb.distributed.memory.training_memory`) for one recorded run: model states,
    what one forward keeps (every block's activations or only its input, plus the head), and one block recomputed
    in backward."""
    m = memory_model.training_memory(
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
    return records.measured_table(headers, rows, record.run)


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
    return intro + "\n\n" + records.measured_table(headers, rows, record.run)


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
    return records.measured_table(headers, rows, record.run)


#: H100's NVLink between two GPUs, as NCCL's Sylvain Jeaugey put it (NVIDIA/nccl-tests#212, 2024-05-06): 450 GB/s
#: each way is the line rate of its 18 links; less about 20% of protocol overhead NCCL gets an effective 370 GB/s,
#: seen as busbw of operations other than all-reduce, or with ``NCCL_ALGO=RING``.
H100_NVLINKS = 18


def _without_ansi(text: str) -> str:
    """``nvidia-smi topo -m`` underlines its header with terminal escape codes; they are no text."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def nvlinks(record: CollectiveBandwidth) -> int | None:
    """How many bonded NVLinks join the GPUs (``NV18`` in ``nvidia-smi topo -m``), or ``None`` when the record
    shows none."""
    found = re.search(r"\bNV(\d+)\b", _without_ansi(record.topology or ""))
    return int(found.group(1)) if found else None


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

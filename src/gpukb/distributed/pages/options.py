"""The options page (docs/distributed/options.md): FSDP's options, Composer's keys and the checkpointing default,
from the chapter's data file and the library's signatures.
"""

from __future__ import annotations

from gpukb import records
from gpukb.distributed import checkpointing
from gpukb.distributed.fsdp_config import mode_dtypes, plan
from gpukb.distributed.options import facts, source
from gpukb.distributed.pages import _cell
from gpukb.distributed.results import FSDP_SINGLE_GPU_ID, FsdpTraining
from gpukb.tables import markdown_table


def _cite(source_id: str) -> str:
    s = source(source_id)
    where = f"{s.path} " if s.path else ""
    return f"[{where}({s.version})]({s.url})"


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

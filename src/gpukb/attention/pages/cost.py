"""The page “Scale, softmax and cost” (docs/attention/cost.md): its tables, figures and text."""

from __future__ import annotations

from gpukb.attention import costs
from gpukb.attention.pages import _record
from gpukb.calculators import Field, calculator_html
from gpukb.measuring.counting import ELEMENT_BYTES
from gpukb.performance.ceilings import h100_ceilings, measured_ridge
from gpukb.tables import markdown_table


def scaling() -> str:
    """Variance of q·k with and without the 1/√d scale, and how peaked the softmax gets."""
    return markdown_table(*costs.scaling_table())


def cost_table() -> str:
    """Operations and bytes of one forward pass over sequence lengths (batch 4, 32 heads of 128, bf16)."""
    return markdown_table(*costs.costs_table())


def kv_cache() -> str:
    """KV-cache sizes of a 32-layer model with 32 query heads of 128 at 8192 tokens."""
    return markdown_table(*costs.kv_cache_table())


def decode() -> str:
    """One decoding step's attention for the KV-cache model shape, against the H100's measured copy bandwidth."""
    ceilings = h100_ceilings()
    table = markdown_table(*costs.decode_table(bandwidth=ceilings["bandwidth"] * 1e9))
    return (
        table + f"\n\nTimes at {ceilings['bandwidth'] / 1e3:.2f} TB/s, the H100's copy ceiling (a 1 GiB `copy_`, "
        f"the median of interleaved rounds); its "
        f"measured ridge point for bf16 is {measured_ridge(ceilings, 'bf16'):.0f} FLOP/B.\n"
    )


def flash_rereads() -> str:
    """What the kernel's measured time at the standard shape says about where its re-reads of K and V came from:
    the bandwidth they would have needed from HBM, against the H100's measured copy bandwidth."""
    rec = _record()
    case = next(c for c in rec.cases if c.group == "standard" and not c.causal)
    block_m = int(case.config.split("x")[0])
    traffic = costs.flash_traffic_bytes(case.batch, case.heads, case.seq, case.seq, case.head_dim, block_m)
    compulsory = costs.attention_costs(case.batch, case.heads, case.seq, case.seq, case.head_dim).io_bytes
    seconds = case.triton.ms.median / 1e3
    copy = h100_ceilings()["bandwidth"]  # GB/s
    needed = traffic / seconds / 1e9
    return (
        f"At the standard shape (batch {case.batch}, {case.heads} heads, {case.seq} tokens, head dim "
        f"{case.head_dim}, not causal) the [Triton kernel](../kernel/) uses blocks of {block_m} queries, so it reads "
        f"K and V {case.seq // block_m} times: {traffic / 1e9:.1f} GB if every read reached HBM, against "
        f"{compulsory / 1e9:.2f} GB of compulsory traffic. It took {case.triton.ms.median:.3f} ms, which would "
        f"need {needed / 1e3:.1f} TB/s from HBM, {needed / copy:.1f} times the {copy / 1e3:.2f} TB/s of the H100's "
        f"copy ceiling: at least {1 - copy / needed:.0%} of those bytes cannot have come from HBM, and "
        "came from the L2 cache instead.\n"
    )


def attention_calculator() -> str:
    """The attention-cost calculator: :func:`gpukb.attention.costs.attention_summary` computed in the browser, with
    the element sizes exported from :data:`gpukb.measuring.counting.ELEMENT_BYTES`."""
    data = {"element_bytes": dict(ELEMENT_BYTES)}
    dtypes = [d for d in ELEMENT_BYTES if d.startswith(("fp", "tf", "bf"))]
    fields = [
        Field("batch", "batch", default="1"),
        Field("heads", "heads", default="32"),
        Field("kv_heads", "kv_heads", default="8", hint="empty: as many as heads"),
        Field("q_len", "q_len", default="8192"),
        Field("kv_len", "kv_len", default="8192"),
        Field("head_dim", "head_dim", default="128"),
        Field("causal", "causal", "checkbox", "on"),
        Field("dtype", "dtype", "select", "bf16", [(d, d) for d in dtypes]),
        Field("layers", "layers (for the cache)", default="32"),
    ]
    return calculator_html("attention", "The cost of one attention layer", fields, data)

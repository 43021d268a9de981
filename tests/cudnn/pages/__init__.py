"""The cell checks of the cudnn pages, one module per page (``test_<page>.py`` checks ``gpukb.cudnn.pages.<page>``);
this package holds what several of them read, and the checks of what the pages share (``gpukb.cudnn.pages``).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from typing import Any

from tests.helpers import ROOT, h100_ceilings_json, markdown_tables

DATA = ROOT / "src" / "gpukb" / "data"


def _tuple(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.strip("`()").split(","))


def check_fact_table(markdown: str, kwargs: dict[str, Any]) -> None:
    (topic,) = kwargs["args"]
    raw = tomllib.loads((DATA / "cudnn" / "facts.toml").read_text(encoding="utf-8"))
    facts = [f for f in raw["fact"] if f["topic"] == topic]
    (table,) = markdown_tables(markdown)
    assert [row["fact"] for row in table] == [f["text"] for f in facts]
    for row, f in zip(table, facts, strict=True):
        assert row["test"] == f"`{f['test']}`"
        assert row["status, checked"] == f"{f['status']}, {f['checked'].isoformat()}"
        assert row["source"] == ", ".join(f["sources"])
    # every key cited is spelled out once below the table, and nothing else
    used = {s for f in facts for s in f["sources"]}
    listed = re.findall(r"^- \*\*([\w-]+)\*\*: (.+)$", markdown, re.M)
    assert [k for k, _ in listed] == [k for k in raw["sources"] if k in used]
    assert all(text == raw["sources"][k] for k, text in listed)


def _ceilings() -> tuple[dict[str, float], float]:
    """The H100's product ceilings per type and its copy ceiling as the pages quote them: fp16, bf16 and the copy
    from the interleaved ceilings run, the other types the performance sweep's best."""
    sweep = json.loads((DATA / "results" / "performance" / "h100-sweep.json").read_text(encoding="utf-8"))
    best: dict[str, float] = {}
    for r in sweep["gemm"]:
        if r["tflops"] is not None:
            best[r["dtype"]] = max(best.get(r["dtype"], 0.0), r["tflops"])
    quoted = h100_ceilings_json()
    best.update(fp16=quoted["fp16"], bf16=quoted["bf16"])
    return best, quoted["bandwidth"]


def _layers() -> dict[str, dict[str, Any]]:
    raw = tomllib.loads((DATA / "cudnn" / "resnet50_layers.toml").read_text(encoding="utf-8"))
    return {layer["name"]: {**layer, "n": raw["batch"]} for layer in raw["layer"]}


def _work(layer: dict[str, Any]) -> tuple[int, int, tuple[int, int, int, int]]:
    """FLOPs (2 per multiply-add, no bias), fp16 bytes (input, filter, output once) and output shape."""
    n, c, hw, k, r = layer["n"], layer["c"], layer["hw"], layer["k"], layer["kernel"]
    out = (hw + 2 * layer["pad"] - r) // layer["stride"] + 1
    flops = 2 * n * k * out * out * c * r * r
    return flops, 2 * (n * c * hw * hw + k * c * r * r + n * k * out * out), (n, k, out, out)


def check_layer_ceilings(markdown: str, kwargs: dict[str, Any]) -> None:
    """The sentence under the bounds: each ceiling as the performance chapter quotes it (fp16 and bf16 and the copy as
    their named quantities, another type as the sweep's best), the batch of the layers file, and a link to a heading
    that exists."""
    (dtype,) = kwargs["args"] or ("fp16",)
    best, bandwidth = _ceilings()
    quoted = h100_ceilings_json()
    span = r'<span class="gpukb-q" data-quantity="(?P<name>[\w-]+)">(?P<value>[\d.]+)</span>'
    match = re.fullmatch(
        rf"Bounds use the H100's measured ceilings: (?:{span}|(?P<plain>\d+)) TFLOP/s for {dtype} products and "
        rf"{span.replace('name', 'bw_name').replace('value', 'bw')} GB/s of copy bandwidth, each the median of rounds "
        r"interleaved in one run \(\[the H100's ceilings\]\(\.\./\.\./performance/h100/#(?P<anchor>[\w-]+)\)\); "
        r"batch (?P<batch>\d+), no bias\.",
        markdown.strip(),
    )
    assert match, markdown
    if dtype in ("fp16", "bf16"):
        assert match["name"] == f"h100-cublas-{dtype}-ceiling"
        assert float(match["value"]) == round(quoted[dtype], 1)
    else:
        assert int(match["plain"]) == round(best[dtype])
    assert (match["bw_name"], int(match["bw"])) == ("h100-copy-1gib", round(bandwidth))
    raw = tomllib.loads((DATA / "cudnn" / "resnet50_layers.toml").read_text(encoding="utf-8"))
    assert int(match["batch"]) == raw["batch"]
    headings = re.findall(r"^#+ (.+)$", (ROOT / "docs" / "performance" / "h100.md").read_text(encoding="utf-8"), re.M)
    slugs = {re.sub(r"[^\w\s-]", "", h.lower()).strip().replace(" ", "-") for h in headings}
    assert match["anchor"] in slugs


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "fact_table": check_fact_table,
    "layer_ceilings": check_layer_ceilings,
}

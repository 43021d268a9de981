"""Helpers the tests share: where the repository is, the skip-or-fail rule for missing tools, a bare PATH, the
H100's quoted ceilings read straight from their record."""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def require(condition: bool, reason: str) -> None:
    """Skip when a tool the test needs is missing; fail instead where CI demands every test run.

    ``.ci/run`` sets ``GPUKB_REQUIRE_ALL=1`` so the browser and workflow tests cannot quietly skip in CI.
    """
    if condition:
        return
    if os.environ.get("GPUKB_REQUIRE_ALL") == "1":
        pytest.fail(f"GPUKB_REQUIRE_ALL=1 but {reason}")
    pytest.skip(reason)


def path_without_scripts() -> str:
    """``PATH`` without this Python's scripts directory: what a shell that never activated the venv has."""
    scripts = str(Path(sys.executable).parent)
    return os.pathsep.join(e for e in os.environ.get("PATH", "").split(os.pathsep) if e and e != scripts)


def markdown_tables(text: str) -> list[list[dict[str, str]]]:
    """Every pipe table in a rendered Markdown text, each as rows keyed by header name (``\\|`` unescaped).

    Tests read rendered tables by header, so a swapped or renamed column fails the check of its cells.
    """
    tables: list[list[dict[str, str]]] = []
    block: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append(line)
            continue
        if len(block) >= 2:
            split = [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in block]
            headers = [h if split[0].count(h) == 1 else f"{h}#{i}" for i, h in enumerate(split[0])]
            tables.append([dict(zip(headers, cells, strict=True)) for cells in split[2:]])
        block = []
    return tables


def calculator_fields(html: str) -> dict[str, dict[str, object]]:
    """The fields of a calculator form (``gpukb.calculators.calculator_html``), read from its HTML: by field name,
    its kind (``text``, ``select``, ``checkbox``), the value it opens on, its options ``(value, text)``, the layers it
    shows for (``data-only``, split) and the HTML inside it."""
    from html import unescape

    fields: dict[str, dict[str, object]] = {}
    pattern = r'<div class="gpukb-calc-field gpukb-calc-(\w+)" data-field="(\w+)"(?: data-only="([^"]*)")?>(.*?)</div>'
    for kind, name, only, body in re.findall(pattern, html):
        options = re.findall(r'<option value="([^"]*)"( selected)?>([^<]*)</option>', body)
        value = re.search(r'type="text" value="([^"]*)"', body)
        default = (
            next((v for v, chosen, _ in options if chosen), None) if kind == "select"
            else ("on" if " checked" in body else "") if kind == "checkbox"
            else unescape(value.group(1))
        )  # fmt: skip
        fields[name] = {
            "kind": kind, "default": default, "only": only.split(), "body": body,
            "options": [(v, unescape(t)) for v, _, t in options],
        }  # fmt: skip
    return fields


def outside_tables(text: str) -> list[str]:
    """The non-blank lines of a rendered Markdown text that are not part of a pipe table, stripped: what a check
    reads besides the tables (a table-only render block must have none)."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("|")]


def size_text(n: float) -> str:
    """A size as the pages print it, spelled out here for the checks (not read from ``gpukb.tables.bytes_text``): the
    largest binary unit the size fills, whole when exact and to one decimal otherwise; under 1 KiB, bytes; from
    1024 EiB on, bytes as a power of ten to three figures."""
    if n >= 1023.95 * 2**60:  # "1024.0 EiB" and beyond: no larger unit
        return f"{float(n):.3g} B"
    for unit, shift in (("EiB", 60), ("PiB", 50), ("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        whole, rest = divmod(n, 2**shift)
        if whole >= 1:
            return f"{int(whole)} {unit}" if rest == 0 else f"{n / 2**shift:.1f} {unit}"
    return f"{int(n):,} B" if n == int(n) else f"{n:,.1f} B"


def mkdocs_config() -> dict:
    """``mkdocs.yml`` as plain data; its tags (``!ENV SITE_URL``, ``!!python/name:...``) read as ``None``."""
    import yaml

    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)


def h100_ceilings_json() -> dict[str, float]:
    """The H100 ceilings every page quotes, read straight from the interleaved run's JSON without the library:
    the median over rounds of the 1 GiB ``copy_`` (GB/s) and of the fp16 and bf16 products at 4096×4096×8192
    (TFLOP/s). What the tests check the library's figures against."""
    path = ROOT / "src/gpukb/data/results/performance/ceilings-h100.json"
    timings = json.loads(path.read_text(encoding="utf-8"))["timings"]

    def median(item: str) -> float:
        return statistics.median(t["rate"] for t in timings if t["item"] == item)

    shape = "4096x4096x8192"
    return {
        "bandwidth": median("copy-1gib"),
        "fp16": median(f"gemm-fp16-{shape}"),
        "bf16": median(f"gemm-bf16-{shape}"),
    }


def reporting_cuda(tensor: object) -> object:
    """``tensor`` (a CPU tensor) viewed as one that reports a CUDA device: for the host-side checks and choices that
    read ``.device`` before anything runs on it, tested without a GPU (nothing may compute with it)."""
    import torch

    class OnCuda(torch.Tensor):
        @property
        def device(self) -> torch.device:
            return torch.device("cuda", 0)

    return tensor.as_subclass(OnCuda)


def drawn(draw: Callable[..., str], *args: Any) -> Any:
    """The matplotlib figure a page's figure function drew, taken at the call that would turn it into SVG (its
    points, lines, axes and legend are then read back against the records)."""
    import matplotlib.pyplot as plt
    import pytest

    import gpukb.figures

    figures = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gpukb.figures, "to_svg", lambda fig: figures.append(fig) or "")
        draw(*args)
    (fig,) = figures
    plt.close(fig)
    return fig


def exactly(message: str) -> str:
    """A ``match=`` pattern for the whole message, literally: a changed argument name or word in it fails."""
    return f"^{re.escape(message)}$"


def raises_exactly(error: type[Exception], message: str) -> Any:
    """``pytest.raises`` matching the whole message, literally (:func:`exactly`)."""
    return pytest.raises(error, match=exactly(message))

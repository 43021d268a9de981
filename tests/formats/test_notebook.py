"""The format explorer notebook runs, its stored outputs are the ones it produces, and they say the right things.

The notebook is stored with its outputs, so the site build renders it without a kernel (fast and offline). This
test executes it with nbclient in a fresh ``python3`` kernel (ipykernel's own kernel spec, which starts this same
interpreter) and compares every text output with the stored one. After changing the notebook or the library,
store the new outputs with ``GPUKB_UPDATE_NOTEBOOK=1 python -m pytest tests/formats/test_notebook.py``.
"""

from __future__ import annotations

import copy
import os
import re

import pytest

from gpukb.formats.mixed_precision import ulp
from gpukb.formats.spec import get_format
from tests.helpers import ROOT, mkdocs_config

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = ROOT / "docs" / "formats" / "explorer.ipynb"
TEXT_TYPES = ("text/plain", "text/markdown")


@pytest.fixture(scope="module")
def stored():
    return nbformat.read(NOTEBOOK, as_version=4)


@pytest.fixture(scope="module")
def executed(stored):
    nb = copy.deepcopy(stored)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=120,
        allow_errors=False,
        record_timing=False,
        resources={"metadata": {"path": str(ROOT)}},
    )
    client.execute()
    if os.environ.get("GPUKB_UPDATE_NOTEBOOK") == "1":
        nbformat.write(nb, NOTEBOOK)
    return nb


def _text(nb) -> list[list[str]]:
    """Each code cell's outputs as text: streams, and the text forms of results (images are left out)."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        texts = []
        for out in cell.outputs:
            if out.output_type == "stream":
                texts.append(f"{out.name}: {out.text}")
            elif out.output_type in ("execute_result", "display_data"):
                texts += [f"{kind}: {out.data[kind]}" for kind in TEXT_TYPES if kind in out.data]
            else:
                texts.append(f"{out.output_type}: {out}")
        cells.append(texts)
    return cells


def _output(nb, cell_index: int, kind: str) -> str:
    code = [c for c in nb.cells if c.cell_type == "code"][cell_index]
    if kind == "stream":
        return "".join(o.text for o in code.outputs if o.output_type == "stream")
    return next(o.data[kind] for o in code.outputs if o.output_type in ("execute_result", "display_data"))


def test_stored_outputs_are_the_ones_the_notebook_produces(stored, executed) -> None:
    assert _text(stored) == _text(executed), "re-run with GPUKB_UPDATE_NOTEBOOK=1 to store the new outputs"


def test_every_code_cell_is_stored_with_outputs_and_no_errors(stored) -> None:
    for cell in stored.cells:
        if cell.cell_type == "code":
            assert cell.outputs, cell.source[:60]
            assert all(o.output_type != "error" for o in cell.outputs)


def test_e4m3_row_for_42_5_shows_44(executed) -> None:
    table = _output(executed, 0, "text/markdown")
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in table.splitlines()[2:]}
    assert list(rows) == ["fp32", "tf32", "fp16", "bf16", "e4m3", "e5m2"]
    assert rows["e4m3"] == ["0x63", "0 1100 011", "44", "0.0353", "rounded"]  # not 0 1010 010 as the notes say
    assert rows["e5m2"][1:3] == ["0 10100 01", "40"]
    assert rows["fp16"] == ["0x5150", "0 10100 0101010000", "42.5", "0", "exact"]
    assert rows["fp32"][1] == "0 10000100 01010100000000000000000"


def test_neighbours_of_42_5(executed) -> None:
    text = _output(executed, 1, "stream")
    blocks = dict(re.findall(r"^42\.5 in (\w+):\n(.*?)(?:\n\n|\Z)", text, flags=re.MULTILINE | re.DOTALL))
    assert list(blocks) == ["e4m3", "e5m2", "fp16"]

    def values(block: str) -> list[tuple[str, str]]:
        return [(m[0], m[1]) for m in re.findall(r"^([+-]\d)\s+0x[0-9A-F]+\s+(\S+)", block, flags=re.MULTILINE)]

    assert values(blocks["e4m3"]) == [("-3", "32"), ("-2", "36"), ("-1", "40"), ("+0", "44"), ("+1", "48"),
                                      ("+2", "52"), ("+3", "56")]  # fmt: skip
    assert ("+0", "40") in values(blocks["e5m2"])
    assert values(blocks["fp16"])[3] == ("+0", "42.5")
    assert values(blocks["fp16"])[4] == ("+1", "42.53125")  # the gap at 42.5 is 2^5 * 2^-10
    assert re.search(r"^\+0\s+0x63\s+44\s+stored$", blocks["e4m3"], flags=re.MULTILINE)


def test_gap_plot_and_its_numbers(executed) -> None:
    code = [c for c in executed.cells if c.cell_type == "code"][2]
    assert any("image/png" in o.get("data", {}) for o in code.outputs), "the plot is missing"
    lines = _output(executed, 2, "stream").splitlines()
    assert [line.split()[0] for line in lines] == ["fp16", "bf16", "e4m3", "e5m2"]
    for line in lines:
        fmt = get_format(line.split()[0])
        numbers = re.findall(r"gap at 1: (\S+)\s+at 100: (\S+)\s+at the largest value \((\S+)\): (\S+)", line)[0]
        expected = (ulp(1, fmt), ulp(100, fmt), fmt.max_value, ulp(fmt.max_value, fmt))
        assert [float(n) for n in numbers] == pytest.approx([float(e) for e in expected], rel=1e-5)
    assert "fp16  gap at 1: 0.000976562 at 100: 0.0625   at the largest value (65504): 32" in lines


def _jupyter_plugin_options() -> dict:

    plugins = mkdocs_config()["plugins"]
    return next(p["mkdocs-jupyter"] for p in plugins if isinstance(p, dict) and "mkdocs-jupyter" in p)


def test_rendered_page_has_the_outputs_and_no_external_scripts() -> None:
    """Render the notebook the way the site build does (mkdocs-jupyter, this repository's options), without a kernel."""
    convert = pytest.importorskip("mkdocs_jupyter.convert")
    options = _jupyter_plugin_options()
    assert options["execute"] is False  # the stored outputs are what the page shows
    assert options["include_requirejs"] is False
    html = convert.nb2html(
        str(NOTEBOOK),
        execute=False,
        allow_errors=options["allow_errors"],
        include_requirejs=options["include_requirejs"],
        custom_mathjax_url=options.get("custom_mathjax_url", ""),  # the plugin's default: no MathJax script
    )
    assert "<td>0 1100 011</td>" in html
    assert 'src="data:image/png;base64,' in html
    assert not re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="(?:https?:)?//', html)
    assert "require.js" not in html

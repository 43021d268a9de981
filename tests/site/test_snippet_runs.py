"""The snippets that print something else on a CUDA GPU: their H100 output is recorded, checked and shown.

The site is built without a GPU, so the output under such a snippet is its CPU path. The page shows the H100's
output next to it, read from the record ``site/snippet-runs-h100`` (``gpukb.site.snippet_runs``).
"""

from __future__ import annotations

import re

import pytest

from gpukb.records import load
from gpukb.site.snippet_runs import GPU_SNIPPETS, RECORD_ID, SnippetRuns
from tests.helpers import ROOT
from tests.test_snippets import collect, topic_checks


def _gpu_dependent_snippets() -> list[str]:
    """Snippets whose code asks whether a CUDA GPU is present."""
    return sorted(
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "snippets").rglob("*.py")
        if "cuda.is_available" in p.read_text(encoding="utf-8")
    )


def test_every_gpu_dependent_snippet_is_recorded() -> None:
    assert sorted(GPU_SNIPPETS) == _gpu_dependent_snippets()
    record = load(RECORD_ID, expect=SnippetRuns)
    assert record.run.gpu is not None, "the record's run had no GPU"
    assert sorted(r.snippet for r in record.runs) == sorted(GPU_SNIPPETS)


@pytest.mark.parametrize("snippet", GPU_SNIPPETS)
def test_the_recorded_output_passes_the_snippets_check(snippet: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The snippet's own check (``CHECKS``), run on the recorded output as if on the recording GPU."""
    torch = pytest.importorskip("torch")
    record = load(RECORD_ID, expect=SnippetRuns)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: record.run.gpu.name)
    collect(topic_checks())[snippet](record.output(snippet))


@pytest.mark.parametrize("snippet", GPU_SNIPPETS)
def test_the_page_of_the_snippet_shows_the_recorded_output(snippet: str) -> None:
    pages = [
        p
        for p in (ROOT / "docs").rglob("*.md")
        if re.search(rf'--8<-- "{re.escape(snippet)}(:[a-z_-]+)?"', p.read_text(encoding="utf-8"))
    ]
    assert pages, f"no page includes {snippet}"
    for page in pages:
        assert f'gpu_snippet_output("{snippet}")' in page.read_text(encoding="utf-8"), (
            f"{page.relative_to(ROOT)} shows {snippet}'s CPU output only: render its GPU run below it"
        )


def test_an_unrecorded_snippet_is_named_with_those_recorded() -> None:
    record = load(RECORD_ID, expect=SnippetRuns)
    with pytest.raises(ValueError, match=r"recorded: .*triton_matmul"):
        record.output("snippets/gemm/none.py")

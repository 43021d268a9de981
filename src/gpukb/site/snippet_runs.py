"""What the snippets that behave differently on a CUDA GPU printed on one: recorded, so pages show the GPU's output.

The site is built on a machine without a GPU, where these snippets take their CPU path (Triton's interpreter,
NumPy and the host clock). Their pages show that build-time output, say that it is the CPU's, and show next to it
the output of the same file run on the H100, read from a record (kind ``site.snippet-runs``) with the GPU, the
versions and the date. On the GPU machine::

    PYTHONPATH=$PWD/src python3 bench/snippet_runs.py OUTPUT.json

runs each snippet of :data:`GPU_SNIPPETS` there and writes the record (committed as ``site/snippet-runs-h100``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import Field

from gpukb.records import Record
from gpukb.schema import StrictModel

#: Id of the committed H100 run.
RECORD_ID = "site/snippet-runs-h100"

#: The snippets whose output depends on whether a CUDA GPU is present (device, timer, kernel path).
GPU_SNIPPETS: tuple[str, ...] = (
    "snippets/attention/flash_kernel.py",
    "snippets/attention/flash_training.py",
    "snippets/cuda/vector_add_triton.py",
    "snippets/gemm/batched_gemm.py",
    "snippets/gemm/triton_matmul.py",
    "snippets/performance/time_a_matmul.py",
)


class SnippetRun(StrictModel):
    """One snippet run on the GPU machine.

    Attributes:
        snippet: The file, relative to the repository root (``snippets/<topic>/<name>.py``).
        stdout: What it printed.
        seconds: How long the run took, start-up included.
    """

    snippet: str = Field(pattern=r"^snippets/[a-z0-9_-]+/[A-Za-z0-9_-]+\.py$")
    stdout: str = Field(min_length=1)
    seconds: float = Field(ge=0)


class SnippetRuns(Record):
    """The GPU-dependent snippets, run on one GPU machine."""

    kind: Literal["site.snippet-runs"] = "site.snippet-runs"
    schema_version: Literal[1] = 1
    runs: list[SnippetRun]

    def output(self, snippet: str) -> str:
        """What ``snippet`` printed in this run.

        Raises:
            ValueError: If the run has no such snippet (the message lists those it has).
        """
        for run in self.runs:
            if run.snippet == snippet:
                return run.stdout
        raise ValueError(f"no recorded run of {snippet!r}; recorded: {[r.snippet for r in self.runs]}")


def recorded_output(snippet: str, record_id: str = RECORD_ID) -> tuple[str, str]:
    """What ``snippet`` printed on the GPU machine and the sentence saying where and when (``measured_on``).

    Raises:
        ValueError: If the record has no run of ``snippet`` (the message lists those it has).
    """
    from gpukb.records import load, measured_on

    record = load(record_id, expect=SnippetRuns)
    return record.output(snippet), measured_on(record.run)


def run_snippets(root: Path, snippets: Sequence[str] = GPU_SNIPPETS) -> list[SnippetRun]:
    """Run each snippet under ``root`` (as ``python <file>`` from its folder) and keep what it printed.

    ``bench/snippet_runs.py`` runs this on the GPU machine and writes the record.
    """
    from gpukb.site.snippets import run_snippet

    runs = []
    for snippet in snippets:
        start = time.perf_counter()
        stdout = run_snippet(root / snippet)
        runs.append(SnippetRun(snippet=snippet, stdout=stdout, seconds=round(time.perf_counter() - start, 3)))
    return runs

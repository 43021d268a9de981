"""Run the snippets whose output depends on a CUDA GPU on this GPU, and record what they printed.

Usage (on the GPU machine, from the repository root; the snippets run from their own folders, so the path is
absolute): ``PYTHONPATH=$PWD/src python3 bench/snippet_runs.py OUT.json``,
then copy OUT.json to ``src/gpukb/data/results/site/snippet-runs-h100.json``. The pages that include those
snippets render the record next to the build machine's CPU output (``gpukb.site.snippet_runs``).
"""

from __future__ import annotations

from pathlib import Path

from gpukb.records.script import Script, main
from gpukb.site.snippet_runs import SnippetRuns, run_snippets


def snippet_runs(script: Script) -> SnippetRuns:
    script.note("Each snippet run as `python <file>` from its folder (gpukb.site.snippets.run_snippet).")
    runs = run_snippets(Path.cwd())
    print(f"{len(runs)} snippets")
    return SnippetRuns(run=script.finished(), runs=runs)


if __name__ == "__main__":
    raise SystemExit(main(snippet_runs, __doc__))

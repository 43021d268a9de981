"""Run the snippets whose output depends on a CUDA GPU on this GPU, and record what they printed.

Usage (on the GPU machine, from the repository root; the snippets run from their own folders, so the path is
absolute): ``PYTHONPATH=$PWD/src python3 bench/snippet_runs.py OUT.json``,
then copy OUT.json to ``src/gpukb/data/results/site/snippet-runs-h100.json``. The pages that include those
snippets render the record next to the build machine's CPU output (``gpukb.site.snippet_runs``).
"""

from gpukb.site.snippet_runs import main

if __name__ == "__main__":
    main()

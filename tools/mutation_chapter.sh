#!/usr/bin/env bash
# Mutation-test one chapter (or layer) of gpukb in a copy of this checkout, and keep what a reader of the run needs:
# mutmut's counts and every survivor's diff. Usage:
#
#   tools/mutation_chapter.sh CHAPTER OUT_DIR [CHILDREN] [SECONDS] [MUTANT ...]
#
# CHAPTER is a name `python -m gpukb.site.mutation_scope --chapter` knows; CHILDREN is mutmut's --max-children (the
# number of cores to use; default 2); SECONDS stops a run that is taking too long (default: none), and the counts it
# leaves say how many mutants were not reached. mutmut (a development tool, `pip install mutmut`) must import in the
# python3 on PATH, beside the test extra. The GPU stays hidden, so the tests take the paths CI takes.
set -euo pipefail
chapter=${1:?chapter name}
out=$(mkdir -p "${2:?output folder}" && cd "$2" && pwd)
children=${3:-2}
seconds=${4:-0}
shift $(( $# < 4 ? $# : 4 ))
[[ $children =~ ^[1-9][0-9]*$ ]] || { echo "CORES must be a whole number >= 1; got '$children'" >&2; exit 2; }
[[ $seconds =~ ^[0-9]+$ ]] || { echo "SECONDS must be a whole number >= 0 (0: no limit); got '$seconds'" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/mutation-$chapter.XXXXXX")

# What mutmut needs of the checkout: pyproject.toml's [tool.mutmut] and the folders it copies (also_copy).
cp -r "$root"/pyproject.toml "$root"/mkdocs.yml "$root"/src "$root"/tests "$root"/snippets "$root"/docs "$root"/bench "$work"/
find "$work" -name __pycache__ -prune -exec rm -rf {} +
cd "$work"
if [ -n "${RESUME:-}" ]; then
    mkdir -p mutants && cp -r "$RESUME"/. mutants/
fi
PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} python3 -m gpukb.site.mutation_scope --chapter "$chapter" --write

export CUDA_VISIBLE_DEVICES=""
started=$(date +%s)
status=0
if [ "$seconds" -gt 0 ]; then
    timeout --signal=INT --kill-after=30 "$seconds" python3 -m mutmut run --max-children "$children" \
        "$@" >"$out/run.log" 2>&1 || status=$?
else
    python3 -m mutmut run --max-children "$children" "$@" >"$out/run.log" 2>&1 || status=$?
fi
echo "mutmut run: exit $status after $(( $(date +%s) - started )) s" | tee -a "$out/run.log"

# A run stopped part way can leave one mutant's result file cut short: drop it (that mutant counts as not run).
find mutants -name '*.meta' -print0 | while IFS= read -r -d '' meta; do
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$meta" 2>/dev/null || { echo "unreadable, dropped: $meta"; rm -f "$meta"; }
done | tee -a "$out/run.log"
python3 -m mutmut export-cicd-stats >/dev/null || true
cp mutants/mutmut-cicd-stats.json "$out/stats.json" || true
python3 -m mutmut results --all true >"$out/results.txt" 2>&1 || true
python3 -m mutmut results >"$out/survivors.txt" 2>&1 || true
# Every survivor's diff (and each untested mutant's), for reading them by why they survive; one process, not one each.
python3 - "$out" <<'PY'
import sys
from pathlib import Path

from mutmut.__main__ import SourceFileMutationData, get_diff_for_mutant, status_by_exit_code, walk_mutatable_files

with open(Path(sys.argv[1]) / "diffs.txt", "w") as diffs:
    for path in walk_mutatable_files():
        data = SourceFileMutationData(path=path)
        data.load()
        for name, code in data.exit_code_by_key.items():
            if status_by_exit_code[code] in ("survived", "no tests"):
                diffs.write(f"=== {name}: {status_by_exit_code[code]}\n{get_diff_for_mutant(name, path=path)}\n")
PY
# The verdicts and the stats pass's test map, for RESUME.
mkdir -p "$out/mutants" && (cd mutants && find . \( -name '*.meta' -o -name 'mutmut-stats.json' \) -print0 |
    xargs -0 -r cp --parents -t "$out/mutants")
cat "$out/stats.json"

#!/usr/bin/env bash
# On the GPU machine: run every gpu-marked test and record the run (the verification page renders it).
# Usage: OUT=<folder> bash bench/gpu_tests_and_records.sh, then copy $OUT/gpu-tests-h100.json to
# src/gpukb/data/results/site/. The package is not installed there: PYTHONPATH=src (before any PYTHONPATH given,
# such as a folder of carried wheels). pytest-codeblocks is not installed there: addopts cleared. tests/site needs
# the built site and a browser, which the GPU machine does not have. Each bench/*.py script refreshes its own record.
set -u
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
out=${OUT:?set OUT to a folder for the results}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv
pytest_command=(python3 -m pytest -p no:cacheprovider -o addopts="" -m gpu -q -rA --continue-on-collection-errors
  --ignore=tests/site --junitxml="$out/gpu-tests-h100.xml" tests)
"${pytest_command[@]}" 2>&1 | tail -60 | tee "$out/gpu-tests-h100.log"
python3 -m gpukb.site.gpu_tests "$out/gpu-tests-h100.xml" "$out/gpu-tests-h100.json" \
  --command "${pytest_command[*]}"

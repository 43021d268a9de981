#!/usr/bin/env bash
# On the GPU machine: run every gpu-marked test and record the run (the verification page renders it).
# Usage: OUT=<folder> bash bench/gpu_tests_and_records.sh, then copy $OUT/gpu-tests-h100.json to
# src/gpukb/data/results/site/. The package is not installed there: PYTHONPATH=src (before any PYTHONPATH given,
# such as a folder of carried wheels). pytest-codeblocks is not installed there: addopts cleared. tests/site needs
# the built site and a browser, which the GPU machine does not have. Each bench/*.py script refreshes its own record.
# numpy: the project pins numpy>=1.26,<2.4 (triton 3.6's interpreter); numba-cuda's CUDA target also needs <2.5
# (NVIDIA/numba-cuda#907). On an image with a newer numpy (2.5.2), the numba GPU tests skip and say so; install the
# pinned numpy first to run them.
set -u
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
out=${OUT:?set OUT to a folder for the results}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv
python3 -c "import numpy; print('numpy', numpy.__version__)"
pytest_command=(python3 -m pytest -p no:cacheprovider -o addopts="" -m gpu -q -rA --continue-on-collection-errors
  --ignore=tests/site --junitxml="$out/gpu-tests-h100.xml" tests)
"${pytest_command[@]}" 2>&1 | tail -60 | tee "$out/gpu-tests-h100.log"
python3 -m gpukb.site.gpu_tests "$out/gpu-tests-h100.xml" "$out/gpu-tests-h100.json" \
  --command "${pytest_command[*]}"

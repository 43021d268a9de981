#!/usr/bin/env bash
# On the GPU machine: run every gpu-marked test and record the run (the verification page renders it), and refresh
# the records that changed since the last run. Usage: OUT=<folder> bash bench/gpu_tests_and_records.sh
# Writes $OUT/gpu-tests-h100.json (copy it to src/gpukb/data/results/site/), the formats GPU checks and the Triton GEMM.
# The package is not installed there: PYTHONPATH=src. pytest-codeblocks is not installed there: addopts cleared.
set -u
export PYTHONPATH=src PYTHONUNBUFFERED=1
out=${OUT:?set OUT to a folder for the results}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv
pytest_command=(python3 -m pytest -p no:cacheprovider -o addopts="" -m gpu -q -rA --continue-on-collection-errors
  --ignore=tests/site --junitxml="$out/gpu-tests-h100.xml" tests)
"${pytest_command[@]}" 2>&1 | tail -40 | tee "$out/gpu-tests-h100.log"
python3 -m gpukb.site.gpu_tests "$out/gpu-tests-h100.xml" "$out/gpu-tests-h100.json" \
  --command "${pytest_command[*]}"
python3 bench/formats_gpu.py "$out/formats-h100-gpu-checks.json" > "$out/formats-gpu.log" 2>&1 || tail -5 "$out/formats-gpu.log"
python3 bench/triton_gemm.py "$out/triton-gemm-h100.json" > "$out/triton-gemm.log" 2>&1; tail -15 "$out/triton-gemm.log"

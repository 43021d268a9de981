#!/usr/bin/env bash
# On the GPU machine: run every gpu-marked test (JUnit report for the verification page) and refresh the records
# that changed since the last run. Usage: OUT=<folder> bash bench/gpu_tests_and_records.sh
# The package is not installed there: PYTHONPATH=src. pytest-codeblocks is not installed there: addopts cleared.
set -u
export PYTHONPATH=src PYTHONUNBUFFERED=1
out=${OUT:?set OUT to a folder for the results}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv
python3 -m pytest -p no:cacheprovider -o addopts="" -m gpu -q -rA --continue-on-collection-errors \
  --ignore=tests/site --junitxml="$out/gpu-tests-h100.xml" tests 2>&1 | tail -40 | tee "$out/gpu-tests-h100.log"
python3 bench/formats_gpu.py "$out/formats-h100-gpu-checks.json" > "$out/formats-gpu.log" 2>&1 || tail -5 "$out/formats-gpu.log"
python3 bench/triton_gemm.py "$out/triton-gemm-h100.json" > "$out/triton-gemm.log" 2>&1; tail -15 "$out/triton-gemm.log"

#!/usr/bin/env bash
# On the GPU machine, in one call: the flush tests, then every run whose records the performance and GEMM pages
# render as quantities (gpukb.performance.quantities): the quick and full sweeps, the Triton GEMM run and the GEMM
# ground-up run. Each step has a time limit and writes into $OUT; one line per step is printed, the full output
# goes to $OUT/log.txt. Then copy the files over the committed ones (same ids):
#   $OUT/sweep.json       -> src/gpukb/data/results/performance/h100-sweep.json
#   $OUT/sweep-quick.json -> src/gpukb/data/results/performance/h100-sweep-quick.json
#   $OUT/triton.json      -> src/gpukb/data/results/gemm/triton-gemm-h100.json
#   $OUT/ground-up.json   -> src/gpukb/data/results/gemm/ground-up-h100.json
# Usage: OUT=<folder> bash bench/rerecord_h100.sh [step ...]   (steps: flush-tests sweep-quick sweep triton ground-up)
set -u
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
out=${OUT:?set OUT to a folder for the results}
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(flush-tests sweep-quick sweep triton ground-up)
status=0
for step in "${steps[@]}"; do
  case $step in
    flush-tests) limit=120 cmd=(python3 -m pytest -p no:cacheprovider -o addopts= -q -rA -s tests/measuring/test_flush_gpu.py) ;;
    sweep-quick) limit=90 cmd=(python3 bench/gpu_sweep.py --quick --output "$out/sweep-quick.json") ;;
    sweep) limit=240 cmd=(python3 bench/gpu_sweep.py --output "$out/sweep.json") ;;
    triton) limit=300 cmd=(python3 bench/triton_gemm.py "$out/triton.json") ;;
    ground-up) limit=150 cmd=(python3 bench/gemm_ground_up.py "$out/ground-up.json") ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
  started=$SECONDS
  echo "===== $step: ${cmd[*]}" >>"$out/log.txt"
  timeout "$limit" "${cmd[@]}" >>"$out/log.txt" 2>&1
  rc=$?
  echo "$step: rc=$rc in $((SECONDS - started)) s" | tee -a "$out/log.txt"
  [ $rc -ne 0 ] && status=1
done
exit $status

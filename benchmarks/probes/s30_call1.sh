#!/usr/bin/env bash
# Session 30, call 1 (an H100): honest/triton_frobenius past its skip (does it fit 80 GB now?), the ConvTranspose2d probe as the harness runs it (TF32 off), three
# fresh processes each; the timed-repeat entries on a GPU (the pair's path changed in session 29: harness/timed.py
# `_kept`); then v0.1 calibration: session 29's outliers again, and level 2 from problem 10.
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=memory.used --format=csv,noheader -lms 500 > "$OUT/smi_frobenius.csv" 2>&1 & smi=$!
t0=$(date +%s); timeout 170 python benchmarks/probes/s29_frobenius_h100.py > "$OUT/frobenius.json" 2> "$OUT/frobenius.err"
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/frobenius.err"; kill $smi
for run in 1 2 3; do for h in 0 40; do
    timeout 30 python benchmarks/probes/convt_probe.py $h notf32 >> "$OUT/convt.jsonl" 2>/dev/null; done; done
t0=$(date +%s); timeout $(( 300 - t0 + START )) python -m pytest -m gpu -q -s -p no:cacheprovider --tb=short \
    tests/test_anticheat.py -k "corpus_gpu and (repeat or twin or nondeterministic or frobenius)" > "$OUT/corpus.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/corpus.log"
ONLY=$( (printf '%s\n' v0.1/level1/71_conv_transposed_2D__asymmetric_input__square_kernel \
    v0.1/level1/78_conv_transposed_2D_asymmetric_input_asymmetric_kernel___padded__ v0.1/level1/76_conv_standard_1D_dilated_strided__ \
    v0.1/level1/91_cumsum_reverse v0.1/level1/92_cumsum_exclusive; ls problems/v0.1/level2 | sort -n | awk -F_ '$1>=10' \
    | sed 's/\.py$//; s#^#v0.1/level2/#') | paste -sd,)
t0=$(date +%s); timeout $(( 580 - t0 + START )) kb calibrate --only "$ONLY" --variants eager --out /tmp/cal30 > "$OUT/cal.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/cal.log"; cp /tmp/cal30/records/records.jsonl "$OUT/cal_records.jsonl" 2>/dev/null; true

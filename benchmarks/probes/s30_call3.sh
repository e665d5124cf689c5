#!/usr/bin/env bash
# Session 30, call 3 (what the budget left): v0.1 level 2 calibration from where call 2 stopped
# (s30_call3_ids.txt), then 71_conv_transposed_2D twice more (is its 1.5-1.8x the same every run?).
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1
t0=$(date +%s); timeout $(( 330 - t0 + START )) kb calibrate --only "$(cat benchmarks/probes/s30_call3_ids.txt)" --variants eager --out /tmp/cal30c > "$OUT/cal.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/cal.log"; cp /tmp/cal30c/records/records.jsonl "$OUT/cal_records.jsonl" 2>/dev/null
for i in 1 2; do timeout $(( 400 - $(date +%s) + START )) kb calibrate --only v0.1/level1/71_conv_transposed_2D__asymmetric_input__square_kernel \
    --variants eager --out /tmp/cal30d$i > /dev/null 2>&1; cat /tmp/cal30d$i/records/records.jsonl >> "$OUT/convt_records.jsonl" 2>/dev/null; done; true

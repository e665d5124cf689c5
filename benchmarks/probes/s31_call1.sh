#!/usr/bin/env bash
# Ready for session 31, call 1 (H100 or H200): v0.1 71_conv_transposed_2D, whose judge times its reference at 11.6-16.7
# ms against the candidate's steady 8.3-8.5 ms (session 30): the harness's timing of the reference in three fresh
# plain processes (convt_harness_probe.py: plain loop, time_model, gpu_alone, the kernels' grid and block), then the
# identity graded at each sandbox level (is the candidate's speed the sandbox's?).
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=.
P=v0.1/level1/71_conv_transposed_2D__asymmetric_input__square_kernel
for run in 1 2 3; do timeout 90 python benchmarks/probes/convt_harness_probe.py cuda:0 30 >> "$OUT/convt_harness.jsonl" 2>> "$OUT/convt_harness.err"; done
for level in strong process none; do
    timeout $(( 560 - $(date +%s) + START )) kb calibrate --only "$P" --variants eager --sandbox $level --out /tmp/c31$level \
        > "$OUT/cal_$level.log" 2>&1
    cat /tmp/c31$level/records/records.jsonl >> "$OUT/convt_records.jsonl" 2>/dev/null
done; true

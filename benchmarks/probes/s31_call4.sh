#!/usr/bin/env bash
# Ready for session 32 (session 31 was lent no machine for it), H100 or H200: the new host-bound identity test on
# the timed loop before the head start (it must fail there: the candidate timed by its GPU work, the reference at the
# host's pace), the GPU GELU corpus entries on the candidate's timing module as session 31 left it (the CPU flush
# checks touched it: `_fill_`, `Timer.flush_value`), then the identity of the remaining v0.1 level-1 transposed
# convolutions on the fixed loop.
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=.
sed -i 's/head_start_ms=ref_head_ms)/head_start_ms=0.0)/' harness/timed.py  # the loop as it was before 09bf51b
timeout 120 python -m pytest -m gpu tests/test_timing.py -k host_bound_reference -q -s -p no:cacheprovider > "$OUT/old_loop_test.log" 2>&1
sed -i 's/head_start_ms=0.0)/head_start_ms=ref_head_ms)/' harness/timed.py
timeout 200 python -m pytest -m gpu tests/test_anticheat.py -k "gelu" -q -s -p no:cacheprovider > "$OUT/gpu_corpus_gelu.log" 2>&1
V=v0.1/level1
ONLY=""
for n in 58 61 64 68 70 72 73 74 75 77 79 81; do ONLY="$ONLY,$(ls problems/$V | grep "^${n}_conv_transposed" | sed "s|\.py$||;s|^|$V/|")"; done
timeout $(( 560 - $(date +%s) + START )) kb calibrate --only "${ONLY#,}" --variants eager --out /tmp/c31c > "$OUT/cal_convt.log" 2>&1
cp /tmp/c31c/records/records.jsonl "$OUT/cal_convt_records.jsonl" 2>/dev/null
true

#!/usr/bin/env bash
# session 21, call 2: the gpu-marked tests of test_harness.py and test_timing.py on this session's code; 31_VisionAttention's
# compiled identity with torch.compile's old worker count (16 on this host) against the new default (MAX_JOBS, 8);
# then the v3 calibration sweep resumed from cal_resume/records.jsonl (s20's records, the 16 compiled re-runs of call 1).
set -u
START=$(date +%s)
python -m pip install -q --no-deps wheels-dev/*.whl >/dev/null 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
python -m pip install -q pytest >/dev/null 2>&1
t0=$(date +%s); timeout 260 python -m pytest -m gpu -v -p no:cacheprovider tests/test_harness.py tests/test_timing.py > "$OUT/gpu_tests.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/gpu_tests.log"
V=v3/level3/31_VisionAttention
t0=$(date +%s); TORCHINDUCTOR_COMPILE_THREADS=16 timeout 80 kb calibrate --only $V --variants compiled --out /tmp/cal_v16 > "$OUT/vision.log" 2>&1
echo "threads16 rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/vision.log"
cp /tmp/cal_v16/records/records.jsonl "$OUT/vision16_records.jsonl" 2>/dev/null
mkdir -p /tmp/cal/records && cp cal_resume/records.jsonl /tmp/cal/records/records.jsonl
t0=$(date +%s); timeout $(( 560 - t0 + START )) kb calibrate --suite v3 --variants eager,compiled --out /tmp/cal > "$OUT/cal_v3c.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/cal_v3c.log"; cp /tmp/cal/records/records.jsonl "$OUT/cal_v3_records.jsonl"

#!/usr/bin/env bash
# Session 53: the eleven gpu tests that failed on EXDEV in session 52 (the REFER fix, 4f7af29, first run on a GPU),
# then a cProfile of the judge grading two eager references as submissions (where a short kernel's ~5 ms a timed
# trial goes: #23's locked time), then the rest of s52_ids.txt while the call lasts.
#   [CALL_S=585] bash benchmarks/probes/s53_device.sh   (CALL_S: seconds from the start the last step may run to)
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=.
python -c "import torch, triton; print(torch.__version__, triton.__version__)" >> "$OUT/host.txt" 2>&1
head -11 benchmarks/probes/s52_ids.txt > /tmp/first.txt; tail -n +12 benchmarks/probes/s52_ids.txt > /tmp/rest.txt
timeout 250 python -m pytest -m gpu $(cat /tmp/first.txt) -v -s -p no:cacheprovider -o console_output_style=times \
    --tb=short > "$OUT/gpu_tests_refer.log" 2>&1
OUT="$OUT" timeout 120 python benchmarks/probes/judge_profile.py v3/level1/36_RMSNorm_ v3/level1/40_LayerNorm \
    > "$OUT/judge_profile.log" 2>&1
timeout $(( ${CALL_S:-585} - $(date +%s) + START )) python -m pytest -m gpu $(cat /tmp/rest.txt) -v -s -p no:cacheprovider \
    -o console_output_style=times --tb=short > "$OUT/gpu_tests_rest.log" 2>&1
true

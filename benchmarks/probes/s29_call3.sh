#!/usr/bin/env bash
# session 29, call 3 (H100, what is left of the budget): after the float64 size test counts outputs and the timed
# repeat pair waits on the host: triton_frobenius (the judge ran out of an H100's memory on v0.1 FrobeniusNorm),
# v0.1 63_conv_standard_2D (check_failed) and 87_conv_pointwise_2D (judge OOM) graded as their own identity with the
# judge's memory by stage (kbmemprobe.py); the ConvTranspose2d probe (71 scored 1.78x) under 0, 40 and 64 GiB held.
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/benchmarks/probes KB_MEMPROBE=$OUT/mem.jsonl
for h in 0 40 64; do timeout 20 python benchmarks/probes/convt_probe.py $h >> "$OUT/convt.jsonl" 2>&1; done
t0=$(date +%s); timeout $(( 95 - t0 + START )) python -c "
import sys; from kb_data.harness import worker; worker.PRELOAD.append('kbmemprobe')
from kb_data.cli import main; sys.exit(main(sys.argv[1:]))" calibrate --only v0.1/level1/87_conv_pointwise_2D,v0.1/level1/63_conv_standard_2D__square_input__square_kernel --variants eager --out /tmp/cal03 > "$OUT/cal.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/cal.log"; cp /tmp/cal03/records/records.jsonl "$OUT/cal_records.jsonl"
t0=$(date +%s); timeout $(( 165 - t0 + START )) python -m pytest -m gpu -q -s -p no:cacheprovider --tb=short \
    tests/test_anticheat.py -k "corpus_gpu and triton_frobenius" > "$OUT/corpus.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/corpus.log"; true

#!/usr/bin/env bash
# session 29, call 2 (H100 or H200): v0.1 calibration outliers of call 1 again, with the float64 size test counting outputs
# (63_conv_standard_2D, 91/92 cumsum were check_failed: the float64 copies ran the judge out of memory) and the judge's
# GPU memory by stage (benchmarks/probes/kbmemprobe.py) for the two judge OOMs (76, 87); then the ConvTranspose2d
# probe (71 scored 1.78x as its own identity) under 0, 64 and 110 GiB held (110: an H200 only).
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/benchmarks/probes KB_MEMPROBE=$OUT/mem.jsonl
for h in 0 64 110; do python benchmarks/probes/convt_probe.py $h >> "$OUT/convt.jsonl" 2>&1; done
ONLY=v0.1/level1/71_conv_transposed_2D__asymmetric_input__square_kernel,v0.1/level1/63_conv_standard_2D__square_input__square_kernel,v0.1/level1/87_conv_pointwise_2D,v0.1/level1/91_cumsum_reverse
t0=$(date +%s); timeout $(( 230 - t0 + START )) python -c "
import sys; from kb_data.harness import worker; worker.PRELOAD.append('kbmemprobe')
from kb_data.cli import main; sys.exit(main(sys.argv[1:]))" calibrate --only "$ONLY" --variants eager --out /tmp/cal02 > "$OUT/cal.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/cal.log"; cp /tmp/cal02/records/records.jsonl "$OUT/cal_records.jsonl"; true

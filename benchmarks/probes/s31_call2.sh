set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=.
for run in 1 2 3; do timeout 90 python benchmarks/probes/convt_harness_probe.py cuda:0 30 >> "$OUT/convt_harness.jsonl" 2>> "$OUT/convt_harness.err"; done
nproc > $OUT/nproc.txt; true

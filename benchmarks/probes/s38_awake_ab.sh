#!/usr/bin/env bash
# How a GPU grading's sides should wait, A/B on one machine (session 38 left it open: measured on two machines, both
# sides awake helped max pooling and hurt the tall-skinny GEMM). The realistic batch's one-call-a-round-trip problems
# (max pooling, tall-skinny GEMM; 7 submissions) graded in four arms, one folder each, builds shared: the judge awake
# (the default; the cold arm, whose first grading waits for the builds), the judge asleep in recv() (KB_AWAKE_WAIT_S=0),
# both sides awake (s38_both_awake.patch applied in place for that arm: the candidate's server and the judge's queued
# wait poll too), and the judge awake again (drift). Each arm's summary in $OUT/summary_ARM.txt, records beside it.
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=. KB_BUILD_CACHE=$PWD/.kb-builds BATCH_PROBLEMS='v3/level1/(42_|9_)' BATCH_ARMS="warm:1"
arm() {  # NAME [ENV=VALUE ...]: one arm in its own folder
    local name=$1; shift
    env "$@" BATCH_DIR="$PWD/.kb-ab-$name" ARM_TIMEOUT=150 bash benchmarks/h200.sh batch
    mv "$OUT/batch_summary.txt" "$OUT/summary_$name.txt"
    for f in "$OUT"/batch_run_*; do mv "$f" "$OUT/${name}_$(basename "$f")"; done
}
arm judge_awake BATCH_ARMS="cold:1"
arm judge_asleep KB_AWAKE_WAIT_S=0
patch -p1 < benchmarks/probes/s38_both_awake.patch && arm both_awake; patch -R -p1 < benchmarks/probes/s38_both_awake.patch
arm judge_awake_again
true

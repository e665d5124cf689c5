#!/usr/bin/env bash
# The gpu-marked tests (written in session 39), in the order of an id list
# (benchmarks/probes/s39_part*_ids.txt), each line's result in $OUT/gpu_tests.log; stops before the call's 10 minutes.
# First the machine's cgroups and whether a sandbox gets a memory cap there, into $OUT/host.txt.
#   bash benchmarks/probes/s39_gpu_tests.sh IDS_FILE
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=.
{ cat /proc/self/cgroup; cat /sys/fs/cgroup/cgroup.subtree_control /sys/fs/cgroup/cgroup.controllers 2>&1
  python -c "from tests.harness_support import sandbox_gets_a_cgroup as c, sandbox_gets_a_memory_cap as m; print('cgroup', c(), 'memory cap', m())"
} >> "$OUT/host.txt" 2>&1
timeout $(( 585 - $(date +%s) + START )) python -m pytest -m gpu $(cat "$1") -v -s -p no:cacheprovider -o console_output_style=times \
    --tb=short > "$OUT/gpu_tests.log" 2>&1
true

#!/usr/bin/env bash
# session 27, call 2: every adversarial and hostile GPU corpus entry on main (none has run on a GPU since session 24).
# Not run in session 27 (no device time left after call 1): ready for the next.
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1
t0=$(date +%s); timeout $(( 585 - t0 + START )) python -m pytest -m gpu -v -s -p no:cacheprovider --tb=short --durations=0 \
    tests/test_anticheat.py -k "corpus_gpu and not honest" > "$OUT/corpus.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/corpus.log"

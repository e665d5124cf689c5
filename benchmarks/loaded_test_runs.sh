#!/usr/bin/env bash
# The README's test command (the quick tier) N times in a row, each with two busy loops beside it on the CPU, from
# the checkout it is run in (its .venv); a line per run in $LOG.sum (exit status, seconds, pytest's last line), and
# the tests that failed.
#   bash benchmarks/loaded_test_runs.sh [N] [LOG]
set -u
cd "$(dirname "$0")/.."
runs=${1:-5} log=${2:-/tmp/kb_loaded}
: > "$log.sum"
for i in $(seq 1 "$runs"); do
    sh -c 'while :; do :; done' & a=$!
    sh -c 'while :; do :; done' & b=$!
    start=$(date +%s)
    .venv/bin/python -m pytest -m "not gpu and not slow" -q -n auto --dist worksteal -p no:cacheprovider > "$log.$i.log" 2>&1
    rc=$?
    kill "$a" "$b"
    echo "run $i rc=$rc $(( $(date +%s) - start )) s $(tail -1 "$log.$i.log")" >> "$log.sum"
    grep '^FAILED' "$log.$i.log" | sed 's/^/  /' >> "$log.sum"  # which tests, for the record
done
cat "$log.sum"

#!/usr/bin/env bash
# session 22, call 3: the GPU corpus entries calls 1 and 2 did not run, on the gated batch (as far as the budget goes).
set -u
python -m pip install -q --no-deps wheels-dev/*.whl >/dev/null 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
python -m pip install -q pytest >/dev/null 2>&1
K="corpus_gpu and not (honest or forged or whitewash or patch_ or rt_slow or frozen or noflush or side_stream or gate)"
t0=$(date +%s); timeout 270 python -m pytest -m gpu -v -s -p no:cacheprovider tests/test_anticheat.py -k "$K" > "$OUT/corpus.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/corpus.log"

#!/usr/bin/env bash
# session 28, call 2: the adversarial and hostile GPU corpus (none of it has run on a GPU since session 24), profile
# and claims entries first (the checks changed since), each entry's verdict and time kept (--durations).
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1
first="kernel_never_launched or whitewash_send_gelu or profiler_aware_triton_layernorm or forged_claims or profiled_call or profiler_class or rewrite_reply or framework_ or torch_compile or embedding_bag or dispatcher_override"
t0=$(date +%s); timeout $(( 585 - t0 + START )) python -m pytest -m gpu -v -s -p no:cacheprovider --tb=short --durations=0 \
    tests/test_anticheat.py -k "corpus_gpu and not honest and ($first)" > "$OUT/corpus_a.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/corpus_a.log"
t0=$(date +%s); timeout $(( 585 - t0 + START )) python -m pytest -m gpu -v -s -p no:cacheprovider --tb=short --durations=0 \
    tests/test_anticheat.py -k "corpus_gpu and not honest and not ($first)" > "$OUT/corpus_b.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/corpus_b.log"

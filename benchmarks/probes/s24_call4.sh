#!/usr/bin/env bash
# session 24, call 4 (the budget's last ~290 s): the honest GPU corpus and the roofline entry on this session's harness
# (timed calls compared without the relative error, 0d51908; the roofline on the claims before flooring, 340fe58).
set -u
python -m pip install -q --no-deps wheels-dev/*.whl >/dev/null 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
python -m pip install -q pytest >/dev/null 2>&1
t0=$(date +%s); timeout 150 python -m pytest -m gpu -v -s -p no:cacheprovider --tb=short tests/test_anticheat.py \
    -k "corpus_gpu and (roofline or triton_gemm or triton_gelu or cuda_gemm or reference_softmax or triton_frobenius or triton_fused or cuda_layernorm)" > "$OUT/corpus.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/corpus.log"

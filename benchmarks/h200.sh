#!/usr/bin/env bash
# The GPU runs behind BENCHMARKS.md, one step per argument, each bounded by `timeout` and writing its log
# and results under $OUT (the device tool's output folder; ./h200-out by default). Run from the repo root
# after `pip install --no-build-isolation --no-deps -e .`. Usage: benchmarks/h200.sh STEP [STEP ...]
#   gpu-tests  the gpu-marked tests: the anti-cheat corpus on the real problems, then the harness's (timing checks,
#              calibration, CUDA fault containment), which use CUDA in the test process (graded after the corpus: a
#              process holding a CUDA context has not been tried as a grader since session 21's fix, README); -s prints
#              each verdict as it comes, so a run cut short still shows them
#   gpu-corpus every GPU corpus entry (adversarial and honest) on the real problems, without the slower harness tests
#              ($CORPUS_K: a pytest -k expression to run part of it)
#   gpu-honest the honest corpus alone (every honest GPU entry must pass with no failing flag)
#   noise      the reference graded as its own submission, 2 repeats (BENCHMARKS.md "Noise")
#   noise-long the same with a 400 ms floor on each paired loop (the default since; run 4 of BENCHMARKS.md)
#   noise-compiled  the same for every problem whose baseline is torch.compile, the submission compiled as the reference
#              (COMPILED=module, the default: as the paired reference is; COMPILED=method: its bound forward)
#              ($NOISE_BASELINES: the rows to pair with, default the shipped file; $NOISE_PROBLEMS: a comma-separated subset)
#   overhead   wall time of a grade whose baseline is known (Triton GELU, the reference)
#   pool       50 cheap submissions through the worker pool, against a fresh process for each
#   sweep-v3   eager + torch.compile baselines of every NVIDIA v3 problem (resumable: point $SWEEP_OUT at the last file)
#   sweep-v01  eager + torch.compile baselines of v0.1 levels 1-3 on $DEVICES (default: every visible GPU),
#              compiling with $WORKERS processes (COMPILE_SUITES="": eager only, v0.1's baseline; $CHUNK problems
#              per child); resumable: point $SWEEP_OUT at the file of the last run
#   pairing    the reference timed against itself in five arms of the paired loop, every trial kept (the tilt)
#   stability  16 problems' eager medians measured again and again in one process, timed as the harness does
#              (flush_queued) and as harness 0.1 did (device_synced) (#8)
#   boundary   the honest GPU corpus through grade() one by one: wall and stage times per submission, claimed and
#              trusted ms (run it in this checkout and in an older one to compare: BENCHMARKS.md, Trust boundary)
#   sandbox    the trust boundary's tests (tests/test_sandbox.py) at the machine's level
#   repeat     a 12-problem subset's baselines again (REPEAT_SET=v3, the default, or v01), into
#              $OUT/baselines_repeat_${REPEAT_SET}_${TAG:-a}.jsonl (run-to-run spread)
#   repeat-fresh  the same with Inductor/Triton caches of its own under /tmp/kb-caches-$CACHE_TAG (default $TAG: empty at
#              first, so everything compiles and autotunes afresh; a tag used before reuses them), Inductor's autotune
#              timings logged to $OUT/autotune_$TAG.log and any stored winners kept in $OUT/best_configs_$TAG.tgz
#   sweep-v01-l4  eager baselines of v0.1 level 4 (the Hugging Face models, one per child; resumable like sweep-v01)
#   host       fresh processes' host pace (free and pinned to each CPU): calibration, launch cost, two references
#   host-share each repeat-subset problem timed as graded and with the host out of the interval, in $REPEATS fresh
#              processes (torch.compile from the caches of repeat-fresh's $CACHE_TAG, default share)
#   scale      `kb eval --batch` on 4, 2 and 1 GPUs (30 submissions per GPU): throughput and per-GPU counts
#   batch      the realistic batch (#23, benchmarks/realistic_batch.py: ~100 submissions over 31 v3 problems, most
#              load_inline CUDA): one `kb eval --batch` per arm of $BATCH_ARMS (default "cold:2 warm:1 warm:2": cache
#              state, --workers and, with a third field "fresh", --fresh-judge) in $BATCH_DIR (default ./.kb-batch), builds cached under $KB_BUILD_CACHE (default
#              ./.kb-builds; both kept while the machine is; cold empties the cache), each arm resumable and bounded by $ARM_TIMEOUT; then the summary of every arm
#   audit      `kb audit` of the GPU corpus in upstream's layout (70 solutions, benchmarks/audit_corpus.py), every
#              verdict checked against the corpus; the report is $OUT/audit/report/index.html
set -uo pipefail
OUT=${OUT:-h200-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
for step in "$@"; do
    case $step in
    gpu-tests) timeout "${TESTS_TIMEOUT:-540}" python -m pytest -m gpu tests/test_anticheat.py tests/test_harness.py tests/test_timing.py tests/test_batch.py tests/test_baseline_sweep.py -s -v \
                   -p no:cacheprovider --timeout 150 --tb=short > "$OUT/gpu_tests.log" 2>&1 ;;
    gpu-corpus) timeout "${CORPUS_TIMEOUT:-420}" python -m pytest -m gpu tests/test_anticheat.py -k "${CORPUS_K:-corpus_gpu}" -s -v \
                    -p no:cacheprovider --timeout 150 --tb=short > "$OUT/gpu_corpus.log" 2>&1 ;;
    audit) rm -rf "$OUT/audit_corpus" && python benchmarks/audit_corpus.py build "$OUT/audit_corpus" > "$OUT/audit.log" 2>&1 &&
           timeout 540 kb audit "$OUT/audit_corpus" --out "$OUT/audit" --quiet >> "$OUT/audit.log" 2>&1;
           python benchmarks/audit_corpus.py check "$OUT/audit" >> "$OUT/audit.log" 2>&1 ;;
    batch) b=${BATCH_DIR:-$PWD/.kb-batch}; export KB_BUILD_CACHE=${KB_BUILD_CACHE:-$PWD/.kb-builds}
           [ -f "$b/manifest.jsonl" ] || python benchmarks/realistic_batch.py build "$b" > "$OUT/batch.log" 2>&1
           m="$b/manifest.jsonl"  # $BATCH_ONLY: only the submissions whose model starts so (triton: no builds)
           [ -n "${BATCH_ONLY:-}" ] && m="$b/manifest_$BATCH_ONLY.jsonl" && grep "\"model\": \"$BATCH_ONLY" "$b/manifest.jsonl" > "$m"
           # $BATCH_PROBLEMS: only the problems whose id matches this extended regex (session 37: the large-copy five)
           [ -n "${BATCH_PROBLEMS:-}" ] && grep -E "\"problem\": \"($BATCH_PROBLEMS)" "$m" > "$b/manifest_sel.jsonl" && m="$b/manifest_sel.jsonl"
           for arm in ${BATCH_ARMS:-cold:2 warm:1 warm:2}; do
               IFS=: read -r cache w judge <<< "$arm"; run="$b/run_${cache}_w${w}${judge:+_$judge}${BATCH_ONLY:+_$BATCH_ONLY}${BATCH_PROBLEMS:+_sel}"
               [ "$cache" = cold ] && [ ! -f "$run/records.jsonl" ] && rm -rf "$KB_BUILD_CACHE"
               t0=$(date +%s)
               timeout "${ARM_TIMEOUT:-540}" kb eval --batch "$m" --workers "$w" --out "$run" \
                   ${judge:+--fresh-judge} >> "$OUT/batch.log" 2>&1
               python -c "import json,sys; p=sys.argv[1]+'/wall.json'; import os; o=json.load(open(p)) if os.path.exists(p) else {'wall_s':0}; o['wall_s']+=float(sys.argv[2]); o['what']=sys.argv[3]; json.dump(o,open(p,'w'))" \
                   "$run" "$(( $(date +%s) - t0 ))" "$arm"
           done
           python benchmarks/realistic_batch.py summary "$b"/run_* > "$OUT/batch_summary.txt" 2>&1
           for r in "$b"/run_*; do cp "$r/records.jsonl" "$OUT/batch_$(basename "$r").jsonl"; cp "$r/wall.json" "$OUT/batch_$(basename "$r")_wall.json"; done ;;
    gpu-honest) timeout 200 python -m pytest -m gpu tests/test_anticheat.py -k "honest" -s -v -p no:cacheprovider \
                    --timeout 120 --tb=short > "$OUT/gpu_honest.log" 2>&1 ;;
    noise) timeout 240 python benchmarks/bench_noise.py --baselines kb_data/data/baselines_h200.jsonl \
               --repeats 2 --out "$OUT" > "$OUT/noise.log" 2>&1 ;;
    noise-long) timeout 300 python benchmarks/bench_noise.py --baselines kb_data/data/baselines_h200.jsonl \
               --repeats 2 --min-timed-ms 400 --out "$OUT/noise_long" > "$OUT/noise_long.log" 2>&1 ;;
    noise-compiled) timeout "${NOISE_TIMEOUT:-400}" python benchmarks/bench_noise.py --compiled "${COMPILED:-module}" \
               --baselines "${NOISE_BASELINES:-kb_data/data/baselines_h200.jsonl}" --repeats "${REPEATS:-2}" ${NOISE_PROBLEMS:+--problems "$NOISE_PROBLEMS"} \
               --out "$OUT" > "$OUT/noise_compiled.log" 2>&1 ;;
    overhead) timeout 90 python benchmarks/bench_harness.py overhead --repeats "${REPEATS:-3}" --out "$OUT" > "$OUT/overhead.log" 2>&1 ;;
    pool) timeout 300 python benchmarks/bench_harness.py pool --n 50 --naive 5 --out "$OUT" > "$OUT/pool.log" 2>&1 ;;
    sweep-v3) timeout "${SWEEP_TIMEOUT:-560}" python -m kb_data.cli baselines measure --suite v3 --compile-budget 200 \
                  --max-seconds "${MAX_SECONDS:-480}" --chunk 4 --out "${SWEEP_OUT:-$OUT/baselines_h200_v3.jsonl}" \
                  > "$OUT/sweep_v3.log" 2>&1 ;;
    sweep-v01) timeout "${SWEEP_TIMEOUT:-550}" python -m kb_data.cli baselines measure --suite v0.1 --category level1 --category level2 \
                   --category level3 --compile-suites "${COMPILE_SUITES-v0.1}" --device "${DEVICES:-auto}" --workers "${WORKERS:-48}" \
                   --compile-budget "${COMPILE_BUDGET:-240}" --max-seconds "${MAX_SECONDS:-470}" --chunk "${CHUNK:-4}" \
                   --out "${SWEEP_OUT:-$OUT/baselines_h200_v01.jsonl}" > "$OUT/sweep_v01.log" 2>&1 ;;
    pairing) timeout "${PAIRING_TIMEOUT:-220}" python benchmarks/bench_harness.py pairing --repeats "${REPEATS:-3}" \
               --out "$OUT" > "$OUT/pairing.log" 2>&1 ;;
    boundary) timeout "${BOUNDARY_TIMEOUT:-500}" python benchmarks/bench_boundary.py --out "$OUT/boundary.jsonl" \
                  > "$OUT/boundary.log" 2>&1 ;;
    sandbox) timeout 200 python -m pytest tests/test_sandbox.py -q -p no:cacheprovider > "$OUT/sandbox.log" 2>&1 ;;
    stability) timeout "${STABILITY_TIMEOUT:-200}" python benchmarks/bench_harness.py stability --repeats "${REPEATS:-5}" \
               --out "$OUT" > "$OUT/stability.log" 2>&1 ;;
    repeat) only="" cs=v3  # $REPEAT_SET v3 (default; eager + torch.compile) or v01 (eager, v0.1's baseline)
            if [ "${REPEAT_SET:-v3}" = v01 ]; then
                cs=""
                for p in 4_Matrix_vector_multiplication_ 12_Matmul_with_diagonal_matrices_ 21_Sigmoid 24_LogSoftmax \
                         36_RMSNorm_ 59_conv_standard_3D__asymmetric_input__square_kernel 90_cumprod; do
                    only="$only --only v0.1/level1/$p"; done
                for p in 6_Conv3d_Softmax_MaxPool_MaxPool 14_Gemm_Divide_Sum_Scaling 37_Matmul_Swish_Sum_GroupNorm \
                         48_Conv3d_Scaling_Tanh_Multiply_Sigmoid 53_Gemm_Scaling_Hardtanh_GELU; do
                    only="$only --only v0.1/level2/$p"; done
            else
                for p in 1_Square_matrix_multiplication_ 2_Standard_matrix_multiplication_ 9_Tall_skinny_matrix_multiplication_ \
                         36_RMSNorm_ 40_LayerNorm 42_Max_Pooling_2D 63_conv_standard_2D__square_input__square_kernel; do
                    only="$only --only v3/level1/$p"; done
                for p in 6_Conv3d_Softmax_MaxPool_MaxPool 17_Conv2d_InstanceNorm_Divide 37_Matmul_Swish_Sum_GroupNorm \
                         52_Conv2d_Activation_BatchNorm 85_Conv2d_GroupNorm_Scale_MaxPool_Clamp; do
                    only="$only --only v3/level2/$p"; done
            fi
            timeout "${REPEAT_TIMEOUT:-100}" python -m kb_data.cli baselines measure $only --compile-suites "$cs" --compile-budget 50 \
                --chunk "${CHUNK:-3}" \
                --max-seconds 90 --out "$OUT/baselines_repeat_${REPEAT_SET:-v3}_${TAG:-a}.jsonl" > "$OUT/repeat_${REPEAT_SET:-v3}_${TAG:-a}.log" 2>&1 ;;
    repeat-fresh) c=/tmp/kb-caches-${CACHE_TAG:-${TAG:-a}}
            TORCHINDUCTOR_CACHE_DIR=$c/inductor TRITON_CACHE_DIR=$c/triton TORCH_LOGS=+torch._inductor.runtime.triton_heuristics \
                TORCH_LOGS_OUT="$OUT/autotune_${TAG:-a}.log" "$0" repeat
            (cd "$c/inductor" && find . -name '*.best_config' -printf '%h\0' | sort -zu \
                | tar czf "$OUT/best_configs_${TAG:-a}.tgz" --null -T -) ;;
    sweep-v01-l4) timeout "${SWEEP_TIMEOUT:-200}" python -m kb_data.cli baselines measure --suite v0.1 --category level4 \
                   --compile-suites "${COMPILE_SUITES-}" --workers "${WORKERS:-14}" --compile-budget "${COMPILE_BUDGET:-120}" \
                   --max-seconds "${MAX_SECONDS:-170}" --chunk 1 \
                   --out "${SWEEP_OUT:-$OUT/baselines_h200_v01_l4.jsonl}" > "$OUT/sweep_v01_l4.log" 2>&1 ;;
    host) lscpu > "$OUT/lscpu.txt" 2>&1; nvidia-smi topo -m >> "$OUT/lscpu.txt" 2>&1
          TORCHINDUCTOR_CACHE_DIR=/tmp/kb-caches-host timeout "${HOST_TIMEOUT:-420}" python benchmarks/bench_harness.py host \
              --repeats "${REPEATS:-8}" --out "$OUT" > "$OUT/host.log" 2>&1 ;;
    host-share) c=/tmp/kb-caches-${CACHE_TAG:-share}
          TORCHINDUCTOR_CACHE_DIR=$c/inductor TRITON_CACHE_DIR=$c/triton timeout "${SHARE_TIMEOUT:-300}" \
              python benchmarks/bench_harness.py host-share --repeats "${REPEATS:-3}" --out "$OUT" > "$OUT/host_share.log" 2>&1 ;;
    scale) timeout "${SCALE_TIMEOUT:-480}" python benchmarks/bench_harness.py scale --per-gpu "${PER_GPU:-30}" --gpus "${GPUS:-4,2,1}" --out "$OUT" \
               > "$OUT/scale.log" 2>&1 ;;
    *) echo "unknown step: $step" >&2; exit 2 ;;
    esac
    echo "$step: exit $?"
done

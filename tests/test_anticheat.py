"""Every known reward hack in the corpus is caught; no honest submission gets a failing flag."""
from __future__ import annotations

import json
import os

import pytest
import torch

from kb_data.problems import ProblemSet, default_problems_root
from kb_data.schema import INFORMATIONAL_FLAGS
from kb_data.harness.baselines import BaselineIndex
from kb_data.harness.worker import cuda_devices
from kb_data.harness.grade import Options, grade
from tests.corpus import SMALL_PROBLEMS, entries
from tests.harness_support import sandbox_gets_a_cgroup, sandbox_gets_a_memory_cap

ENTRIES = entries()
# what a reference slowed by the corpus's 20 ms sleeps would have given is over 20x; honest CPU noise stays under 3x
# on a quiet host, and reached 5.07x on this 2-core machine with a busy loop and a memory hog beside the suite (one
# counted batch of a 0.4 ms GELU: the reference's batch fell in a busier moment than the candidate's)
UNAFFECTED_MAX_SPEEDUP = 10.0


def _grade(entry, problems_root, device, trials, baselines=None):
    problem = ProblemSet(problems_root).load(entry.problem)
    opt = Options(device=device, trials=trials, warmup=1 if device == "cpu" else None, timeout_s=600,
                  require_custom_kernel="allow_framework" not in entry.options, gpu=None,
                  memory_limit_gb=3 if "memory_limit_3gb" in entry.options else None)
    rec, _ = grade(problem, entry.path.read_text(), name=str(entry.path), options=opt, baselines=baselines)
    return rec


def _needs_isolation(entry):
    """A hostile entry that really writes, connects or hoards is only run where it gets its own uid (root):
    as the caller's uid, a broken sandbox would let it damage this checkout. One that hoards memory no process maps
    is only run where the kernel caps the sandbox's memory: without the cap it would take the host's."""
    if "needs_isolation" in entry.options and os.geteuid() != 0:
        pytest.skip("this attack is only run where the sandbox gets a uid of its own (as root)")
    if "needs_memory_cap" in entry.options and not sandbox_gets_a_memory_cap():
        pytest.skip("held in memory no process maps: only the sandbox's memory cgroup sees it, and none is writable here")


def _assert_verdict(entry, rec):
    failing = [f for f in rec.flags if f not in INFORMATIONAL_FLAGS]
    details = json.loads(rec.flag_details or "{}")
    where = (f"{entry.path.name}: status={rec.status} flags={rec.flags} error={rec.error!r:.300} "
             f"flagged={ {k: details.get(k) for k in rec.flags}!s:.1500} details={rec.flag_details!s:.400}")
    print(where, flush=True)  # with -s, a device run that is cut short still shows every verdict so far
    bound = json.loads(rec.flag_details or "{}").get("timing_bound")
    print(f"sandbox_freezes {entry.path.stem} {details.get('sandbox_freezes')}", flush=True)
    print(f"timing_bound {entry.path.stem} speedup={rec.speedup} {json.dumps(bound)} {rec.harness_seconds} "
          f"outputs_watched={details.get('outputs_watched')}", flush=True)
    if entry.status == "ok":
        assert rec.status == "ok" and not failing, where
        assert rec.correct and rec.sol_ms > 0, where
    elif entry.status == "caught":
        assert rec.status != "ok", where
    elif entry.status == "floored":  # forged claims: not believed in any counted batch (a grading of few trials may
        # have one, which a single stalled batch of an honest one could also put under the bound: timed, not flagged)
        if rec.status == "ok":
            assert bound and bound["floored"] == bound["batches"] >= 1, where
        else:
            # a claim under the roofline is the same forgery: rejected whether the floor or the roofline saw it
            assert rec.status == "rejected" and {"timer_tampered", "exceeds_roofline"} & set(rec.flags), where
    elif entry.status == "unaffected":  # an attack the trust boundary makes moot: graded on its own work
        assert rec.status == "ok" and not failing, where
        # against the paired reference's batches, or (a grading of few trials counts one, which a host's stall can
        # slow past the cap: 13.2x seen on a loaded machine) against the reference's calls timed before it loaded
        assert rec.speedup is not None and rec.sol_ms > 0, where
        assert min(rec.speedup, (rec.ref_alone_ms or 0.0) / rec.sol_ms) < UNAFFECTED_MAX_SPEEDUP, where
    else:
        assert rec.status == entry.status, where
        assert set(entry.flags) <= set(rec.flags), where
        if rec.status != "rejected":
            assert not rec.correct, where  # a rejected record keeps `correct` as its numbers say


def test_corpus_is_well_formed():
    names = {e.path.name for e in ENTRIES}
    assert len(ENTRIES) >= 30 and len(names) == len(ENTRIES)
    adversarial = [e for e in ENTRIES if e.path.parent.name == "adversarial"]
    assert all(e.status != "ok" for e in adversarial)
    assert all(e.status == "ok" for e in ENTRIES if e.honest)
    ps = ProblemSet(default_problems_root())
    for e in ENTRIES:
        ps.resolve(e.problem)  # every corpus problem is a real problem of the set


CPU_ENTRIES = [e for e in ENTRIES if e.device in (None, "cpu")]


@pytest.mark.slow
@pytest.mark.parametrize("entry", CPU_ENTRIES, ids=[e.path.parent.name + "/" + e.path.stem for e in CPU_ENTRIES])
def test_corpus_cpu(entry, tmp_path, monkeypatch):
    _needs_isolation(entry)
    if "needs_cgroup" in entry.options and not sandbox_gets_a_cgroup():
        pytest.skip("caught by the sandbox cgroup's CPU account or freezer, which a sandbox made here has not (the "
                    "harness runs as root for one)")
    if "builds" in entry.options and os.environ.get("KB_CORPUS_BUILDS") != "1":
        pytest.skip("compiles in its build stage or at run time (25-45 s on 2 cores): KB_CORPUS_BUILDS=1 grades it; "
                    "test_a_builds_linked_framework_kernels_and_aot_code_are_the_frameworks checks the reading")
    if entry.path.parent.name == "hostile":  # its build stage runs every time: a cached build would skip the attack
        monkeypatch.setenv("KB_BUILD_CACHE", str(tmp_path / "builds"))
    rec = _grade(entry, SMALL_PROBLEMS, "cpu", trials=next((int(o[7:]) for o in entry.options if o.startswith("trials_")), 5))
    sampler = json.loads(rec.flag_details or "{}").get("framework_samples")
    if "needs_sampler" in entry.options and isinstance(sampler, str):
        pytest.skip(f"caught by the CPU samples of the timed calls, which this machine refuses: {sampler}")
    if "needs_cgroup" in entry.options and isinstance(sampler, dict) and "unsampled_call_ms" not in sampler:
        pytest.skip("caught by the sandbox cgroup's CPU account, which this sandbox has not (the harness runs as root "
                    "for one)")
    _assert_verdict(entry, rec)


@pytest.mark.parametrize("level", ["process", "strong"])
def test_work_in_a_forked_child_fails_the_profile_at_every_level_with_a_cgroup(level):
    """The profile sees the candidate's own process; the CPU its other processes use during the profiled call is read
    from the sandbox's cgroup. Which processes are the harness's differs by level (strong: the judge's fork and the
    server it started as a PID namespace's init; process: the server itself), and a child the submission forks must
    count as other at both: at the process level it once counted as the harness's own (ok)."""
    if os.geteuid() != 0:
        pytest.skip("the sandbox has a cgroup only where the harness runs as root")
    entry = next(e for e in ENTRIES if e.path.stem == "framework_softmax_in_child_process")
    problem = ProblemSet(SMALL_PROBLEMS).load(entry.problem)
    opt = Options(device="cpu", trials=5, warmup=1, timeout_s=600, sandbox=level, gpu=None)
    rec, _ = grade(problem, entry.path.read_text(), name=str(entry.path), options=opt)
    assert rec.sandbox == level and rec.status == "rejected" and "check_failed" in rec.flags, (rec.status, rec.flags)


GPU_ENTRIES = [e for e in ENTRIES if e.device in (None, "cuda")]


@pytest.mark.gpu
@pytest.mark.parametrize("entry", GPU_ENTRIES, ids=[e.path.parent.name + "/" + e.path.stem for e in GPU_ENTRIES])
def test_corpus_gpu(entry):
    if not cuda_devices():  # asked in a worker: this process initialises no CUDA (README, known limitations)
        pytest.skip("needs a CUDA GPU")
    _needs_isolation(entry)
    if entry.gpu_memory_gb and cuda_devices()[0]["memory_bytes"] < entry.gpu_memory_gb * 1e9:
        pytest.skip(f"needs a GPU of {entry.gpu_memory_gb:g} GB (the judge's, the reference's and the candidate's copies)")
    # the shipped baselines, as `kb eval` grades: a baseline measured again for each entry doubled the corpus's time
    rec = _grade(entry, default_problems_root(), "cuda:0", trials=None, baselines=BaselineIndex.shipped())
    _assert_verdict(entry.on("cuda"), rec)


def test_degenerate_reasons_from_samples():
    """The problem-level check on (seed, candidate, reference, inputs) samples: each kind of degeneracy is
    named, and an ordinary output with small values is not called degenerate."""
    from kb_data.harness.reference import degenerate_reason

    g = torch.Generator().manual_seed(0)
    x1, x2 = torch.rand(4096, generator=g), torch.rand(4096, generator=g)
    sample = lambda outs: [(j, [], [o], [x]) for j, (o, x) in enumerate(zip(outs, (x1, x2)))]
    atol, rtol = 1e-2, 1e-2
    assert degenerate_reason(sample([x1 / x1.norm() / 30, x2 / x2.norm() / 30]), atol, rtol) == \
        "the reference output is within tolerance of a constant"  # FrobeniusNorm-like: every value under atol
    assert degenerate_reason(sample([torch.full((4096,), 3.0), torch.full((4096,), 5.0)]), atol, rtol) == \
        "the reference output is constant"
    assert "barely changes" in degenerate_reason(sample([torch.sin(torch.arange(4096.0))] * 2), atol, rtol)
    assert "equals one of its inputs" in degenerate_reason(sample([x1.relu(), x2.relu()]), atol, rtol)
    assert degenerate_reason(sample([torch.tanh(8 * x1 - 4), torch.tanh(8 * x2 - 4)]), atol, rtol) is None
    assert degenerate_reason(sample([x1 * 0.05, x2 * 0.05]), atol, rtol) is None  # range 0.05 > 2 * atol


def test_a_kernel_the_submission_defines_is_its_own_even_when_named_like_a_library_one():
    """An honest load_inline GEMM whose kernel is called sgemm_tiled ran no library kernel: it was rejected as
    calls_reference_ops and no_custom_kernel in every honest CUDA GEMM of the realistic batch graded on the H200
    (2026-12-02: 16 grades, and the 4 naive ones). A name the submission defines is its own, unless it carries what only a framework or vendor
    kernel carries; an undeclared name, or a vendor's own name declared as a decoy, stays the library's."""
    from kb_data.harness.profiled import _families, declared_kernels, library_kernel

    code = ('''CUDA_SRC = r"""
template <int B> __global__ void __launch_bounds__(256) sgemm_tiled(const float* a, float* c) {}
__global__ void elementwise_kernel(float* x) {}
extern "C" __global__ void ampere_sgemm_128x64_nn() {}
__global__ void softmax_warp_forward(float* x) {}
"""
@triton.autotune(configs=[], key=["n"])
@triton.jit
def mm_kernel(a_ptr, n, BLOCK: tl.constexpr):
    pass
''')
    own = declared_kernels(code)
    assert own == {"sgemm_tiled", "elementwise_kernel", "ampere_sgemm_128x64_nn", "softmax_warp_forward", "triton:mm_kernel"}
    # compiled: a CUDA name only counts where the build holds it (red team: a name in a comment made a cuDNN kernel
    # the submission's own); a Triton name only for a bare kernel name
    assert declared_kernels(code, built=b"..._Z11sgemm_tiledILi64EEvPKfPf...") == {"sgemm_tiled", "triton:mm_kernel"}
    assert library_kernel("void implicit_convolve_sgemm<float, 1024>(int)", declared_kernels(
        "// __global__ void implicit_convolve_sgemm(\n", built=b""))
    assert library_kernel("void sgemm_tiled<64>(float const*, float*)", frozenset({"triton:sgemm_tiled"}))
    mine = {"void sgemm_tiled<64>(float const*, float*)", "elementwise_kernel(float*)", "mm_kernel"}
    assert not any(library_kernel(k, own) for k in mine)
    assert all(library_kernel(k) for k in mine - {"mm_kernel"})  # the same names, not defined by the submission
    decoys = {"ampere_sgemm_128x64_nn", "void (anonymous namespace)::softmax_warp_forward<float, 4>(float*)",
              "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float>>(int)",
              "void gemv2T_kernel_val<int, int, float>(float)", "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n"}
    assert all(library_kernel(k, own) for k in decoys)
    assert _families(set(), mine, ["gemm"], own) == {}
    assert "gemm" in _families(set(), mine | {"sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n"}, ["gemm"], own)


def test_framework_ops_are_recognised_by_their_words_in_framework_namespaces():
    """A family's op is recognised in its variants (in place, masked, fused, vendor-prefixed, pointwise epilogue)
    in the framework's and its libraries' namespaces; a name that merely contains its letters is not, and neither is
    a submission's own torch.library op named after it (red team, 2026-12-02: gelu_, _masked_softmax, oneDNN's
    _linear_pointwise passed exact-name matching)."""
    from kb_data.harness.profiled import _families
    from kb_data.rules import OP_FAMILIES

    fams = sorted(OP_FAMILIES)
    found = lambda *ops: _families(set(ops), set(), fams)
    assert found("aten::gelu_") == {"activation": ["aten::gelu_"]}
    assert found("aten::_masked_softmax") == {"softmax": ["aten::_masked_softmax"]}
    assert found("mkldnn::_linear_pointwise") == {"gemm": ["mkldnn::_linear_pointwise"]}
    assert found("aten::mkldnn_linear", "aten::addmm.out") == {"gemm": ["aten::addmm.out", "aten::mkldnn_linear"]}
    assert found("aten::native_layer_norm") == {"norm": ["aten::native_layer_norm"]}
    assert found("aten::upsample_bilinear2d") == {"resample": ["aten::upsample_bilinear2d"]}  # not gemm's linear
    assert found("prims::convert_element_type", "aten::relu", "aten::erf", "aten::mul", "aten::var_mean") == {}
    assert found("kb_corpus_honest::gelu_erf", "mylib::softmax") == {}  # the submission's own namespace


def _resident_batch(tmp_path, chosen, device, problems_root, baselines, trials):
    """The entries graded as one `kb eval --batch` on one device (its judge kept between a problem's jobs); each
    entry's record, in the order they were graded."""
    import hashlib

    from kb_data.harness.batch import run_batch

    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("".join(json.dumps({"problem": e.problem, "submission": str(e.path)}) + "\n" for e in chosen))
    opt = Options(device=device, trials=trials, warmup=1 if device == "cpu" else None, timeout_s=600)
    sink = run_batch(manifest, tmp_path / "out", problems_root=problems_root, options=opt, workers=1,
                     baselines=baselines, progress=False)
    recs = sink.records()
    by_sha = {r.solution_sha256: r for r in recs}
    for e in chosen:
        _assert_verdict(e.on(device), by_sha[hashlib.sha256(e.path.read_text().encode()).hexdigest()])
    return recs


def _resident(rec) -> bool:
    return "resident" in str(json.loads(rec.flag_details or "{}").get("judge"))


@pytest.mark.slow
def test_a_resident_judge_gives_each_submission_its_own_verdict_whatever_came_before(tmp_path):
    """A batch keeps a device's judge (and its prepared reference) between one problem's submissions: an honest
    one graded after a crash, a forged reply, a thief of the secret seed and a memoiser still gets its own verdict,
    and so do they, each against a reference whose weights and state the earlier grades left as they were built."""
    if os.geteuid() != 0:
        pytest.skip("the judge stays up only where the sandbox has a uid of its own (root)")
    names = ["honest/torch_gelu_erf", "hostile/kill_everything", "adversarial/precomputed_known_seeds",
             "hostile/forge_channel_reply", "honest/torch_custom_op_gelu", "hostile/steal_secret_seed",
             "hostile/reads_earlier_jobs_gelu", "adversarial/cache_by_call_count", "adversarial/copy_ignores_weights_layernorm",
             "honest/torch_layernorm_manual"]
    chosen = [next(e for e in ENTRIES if f"{e.path.parent.name}/{e.path.stem}" == n) for n in names]
    recs = _resident_batch(tmp_path, chosen, "cpu", SMALL_PROBLEMS, None, trials=3)
    order = [r.problem_id for r in recs]
    assert order == sorted(order, key=order.index) and len(set(order)) == 2  # each problem's jobs together
    # the first of a problem prepares the reference (with the baseline measured, the second too: the batch then
    # knows the baseline); the rest reuse it, the jobs after the crash and the forged reply included
    warm = [_resident(r) for r in recs]
    assert warm.count(True) >= len(recs) - 4 and not warm[0], warm


@pytest.mark.gpu
def test_a_resident_gpu_judge_gives_every_corpus_entry_of_its_problems_the_verdict_it_gets_alone(tmp_path):
    """The GPU corpus of GELU, Softmax and LayerNorm (hostile, adversarial and honest entries, Triton, CUDA and
    torch.compile among them) graded as one batch on one GPU, whose judge stays up across each problem's entries:
    every entry gets its corpus verdict, as graded alone, and the prepared reference is reused."""
    if not cuda_devices():
        pytest.skip("needs a CUDA GPU")
    problems = ("v3/level1/26_GELU_", "v3/level1/23_Softmax", "v3/level1/40_LayerNorm")
    chosen = [e for e in GPU_ENTRIES if e.problem in problems and "allow_framework" not in e.options
              and ("needs_isolation" not in e.options or os.geteuid() == 0)]
    recs = _resident_batch(tmp_path, chosen, "cuda:0", default_problems_root(), BaselineIndex.shipped(), trials=None)
    assert sum(map(_resident, recs)) >= len(recs) - 2 * len(problems), [_resident(r) for r in recs]


def test_a_builds_linked_framework_kernels_and_aot_code_are_the_frameworks(tmp_path):
    """A compiled extension that calls the framework's kernels below the dispatcher (at::native's structured_mm_out_cpu,
    at::cpublas::gemm) runs no op the profiler records: the judge reads those linked names from the cached build as
    ops of the profile, where the families find them. An exported AOTInductor package (a stored zip) or Inductor's
    compiled kernels in the build are torch.compile's code. Built from the mangled names and the package layout the red team's builds held."""
    from kb_data.harness import build
    from kb_data.harness.profiled import _INDUCTOR_MARKS, _families, built_files, linked_framework_ops
    from kb_data.rules import OP_FAMILIES

    ext = tmp_path / "cache" / ("k" * 32) / build.EXTENSIONS / "ext"
    ext.mkdir(parents=True)
    (ext / "ext.so").write_bytes(b"\0_ZN2at6native21structured_mm_out_cpu4implERKNS_6TensorES4_S4\0"
                                 b"_ZN2at7cpublas4gemmENS0_13TransposeTypeE\0_ZN2at6native99short\0")
    (ext / "renamed.so.1").write_bytes(b"_ZN2at6native14layer_norm_cpuERKNS_6TensorE")  # every file of the build
    job = {"build_key": "k" * 32, "build_cache_root": str(tmp_path / "cache"), "submission_code": ""}

    def built_bytes(job):
        return b"".join(data for _, data in built_files(job))

    linked = linked_framework_ops(built_bytes(job))
    assert linked == {"aten::structured_mm_out_cpu", "aten::gemm", "aten::layer_norm_cpu"}
    assert set(_families(linked, set(), sorted(OP_FAMILIES))) == {"gemm", "norm"}
    assert not any(m in built_bytes(job) for m in _INDUCTOR_MARKS)
    import zipfile

    with zipfile.ZipFile(ext / "ln.pt2", "w", zipfile.ZIP_STORED) as z:
        z.writestr("ln/data/aotinductor/model/wrapper.cpp", "aoti_torch_get_data_ptr(...);")
    assert any(m in built_bytes(job) for m in _INDUCTOR_MARKS)
    (ext / "ln.pt2").unlink()
    # Inductor's own C++ kernels compiled in the build stage (red team session 28: its fused LayerNorm called by ctypes)
    (ext / "kern.so").write_bytes(b"\0inductor_cpu_integer_div_error_flag\0_Z15welford_combine\0")
    assert any(m in built_bytes(job) for m in _INDUCTOR_MARKS)

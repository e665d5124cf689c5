"""What the profiler saw: the candidate's profiled call against the reference's heavy op families (by framework op
in any variant, and by the vendor-library kernel that does the work, whoever launched it), against its own timed
calls (the same outputs, no far longer busy time), and against the sandbox's other processes (CPU work the profile
cannot see). The profile itself is the candidate's claim (SECURITY.md, Residual risks)."""
from __future__ import annotations

import collections
import functools
import re

import torch

from kb_data.harness import build, channel, timing
from kb_data.harness.reference import _call, clone_inputs
from kb_data.harness.copies import framework_pages_in
from kb_data.harness.sampler import PERIOD_NS
from kb_data.harness.session import cpu_threads, draw_seed, flag, fresh_inputs, judged
from kb_data.rules import CPU_CODE_GENERATING_FAMILIES, OP_FAMILIES, SUBSTITUTE_FAMILIES

REDUCED_PRECISION_KERNEL_RE = re.compile(r"bf16|f16|fp16|half|h884|h1688|h16816|hmma|tf32|s16816|i8816|e4m3|e5m2", re.I)
# Kernels from the framework itself or a vendor library (library_kernel): a candidate that launches only these wrote
# no kernel. The names no kernel of the submission's own can carry, whatever it declares: a framework namespace, a
# vendor library's own words or its architecture-prefixed kernel names ...
VENDOR_KERNEL_RE = re.compile(
    r"at::|at_cuda_detail|\bcub::|cublas|cutlass|cudnn|xmma|nvjet|gemv2|gemmSN|gemmk1|splitKreduce|flash_fwd|fmha|"
    r"pytorch_flash|triton_(poi|per|red|tem|for)_|^Memcpy|^Memset|cask_|cutensor|cusparse|curand|"
    r"^(void )?(ampere|hopper|volta|turing|maxwell|sm\d+)_|^void \(anonymous namespace\)::", re.I)
# ... and the names of library kernels that an agent gives its own kernels too (a library's unless the submission
# defines the kernel)
FRAMEWORK_NAME_RE = re.compile(
    r"sgemm|hgemm|implicit_convolve|precomputed_convolve|explicit_convolve|im2col|col2im|\bfft|elementwise_kernel|"
    r"reduce_kernel|CatArrayBatchedCopy|indexSelect|gatherTopK|radixSort|bitonicSort", re.I)
# each qualifier ends where whitespace does: nested repeats whose separator could be empty backtracked exponentially on
# a comment of "__global__" and 48 letters, and the grading ran out its time (red team, session 42)
_CUDA_KERNEL_DEF = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*|[\w:<>*&]+\s+)*?(?!__launch_bounds__)(\w+)\s*\(")
_TRITON_KERNEL_DEF = re.compile(r"@triton\.jit\b[^\n]*\n(?:[ \t]*@[^\n]*\n)*[ \t]*def\s+(\w+)")


def declared_kernels(code: str, built: bytes | None = None) -> frozenset[str]:
    """Names of the GPU kernels a submission's source defines: CUDA `__global__` functions (with `built`, the bytes
    of its compiled extensions, only those whose name is in them: a name in a comment or an unused string is no
    kernel) and `@triton.jit` ones, as "triton:<name>"."""
    cuda = {n for n in _CUDA_KERNEL_DEF.findall(code) if built is None or n.encode() in built}
    return frozenset(cuda) | frozenset(f"triton:{n}" for n in _TRITON_KERNEL_DEF.findall(code))


def built_files(job: dict) -> list[tuple[str, bytes]]:
    """(suffix, bytes) of every file of the submission's cached build: its compiled extensions, a library renamed, an
    object file, an exported program package (a stored zip of generated code)."""
    path = build.cached(job["build_key"], job.get("build_cache_root")) if job.get("build_key") else None
    # plain files only: a cache written before builds were copied without links may hold one to anywhere
    return [(f.suffix, f.read_bytes()) for f in sorted(path.rglob("*")) if f.is_file() and not f.is_symlink()] \
        if path else []


def own_kernels(job: dict, files: list[tuple[str, bytes]] | None = None) -> frozenset[str]:
    """The kernels the submission being graded defines, its CUDA ones checked against its compiled extensions (a
    name in its sources or comments is no kernel); `files`: its build's, when already read."""
    files = built_files(job) if files is None else files
    return declared_kernels(job["submission_code"], b"".join(data for suffix, data in files if suffix == ".so"))


# The framework's kernels below its dispatcher, as a compiled extension links them (Itanium-mangled at::native:: and
# at::cpublas:: names): called so, they run without an op the profiler records
_LINKED_NATIVE = re.compile(rb"_ZN2at(?:6native|7cpublas)(\d{1,4})")  # a name's length: 5000 digits raised
# torch.compile's code in a build: AOTInductor's generated kernels and the shims they call, Inductor's C++ prefix code
_INDUCTOR_MARKS = (b"aoti_torch_", b"aotinductor/",  # AOTInductor's packages and their shim calls
                   b"inductor_cpu_integer_div_error_flag", b"_TORCHINDUCTOR_PYOBJECT")  # Inductor's C++ prefix code


def linked_framework_ops(built: bytes) -> frozenset[str]:
    """The framework's native kernels a build links, as aten op names ("aten::structured_mm_out_cpu")."""
    names = set()
    for m in _LINKED_NATIVE.finditer(built):
        n = int(m.group(1))
        name = built[m.end():m.end() + n]
        if len(name) == n and re.fullmatch(rb"\w+", name):
            names.add("aten::" + name.decode())
    return frozenset(names)


def kernel_base_name(kernel: str) -> str:
    """"void ns::name<128>(float*, int)" -> "name": the profiler's demangled kernel name without its signature."""
    name = kernel.removeprefix("void ").split("(", 1)[0].split("<", 1)[0]
    return name.rsplit("::", 1)[-1].strip()


def library_kernel(kernel: str, own: frozenset[str] = frozenset()) -> bool:
    """A kernel of the framework or a vendor library. One the submission defines itself (`own`) is not, unless its
    name carries what only a framework or vendor kernel carries."""
    if VENDOR_KERNEL_RE.search(kernel):
        return True
    base = kernel_base_name(kernel)
    # a Triton kernel's name is bare: a templated or typed name is not one, whatever Python function shares it
    mine = base in own or (f"triton:{base}" in own and not any(c in kernel for c in "(<"))
    return bool(FRAMEWORK_NAME_RE.search(kernel)) and not mine


# Namespaces of the framework's own and its vendor libraries' operators; a submission's torch.library ops live
# in namespaces of their own, and whatever framework op they call inside is recorded under its own name too.
FRAMEWORK_OP_NAMESPACES = {"aten", "prims", "mkldnn", "onednn", "quantized", "_quantized", "cudnn", "xnnpack", "mkl",
                           "fbgemm"}


@functools.lru_cache(maxsize=1)
def framework_namespaces() -> frozenset[str]:
    """Every namespace of the framework's operators: those its dispatcher holds in this process (the judge's, which
    never loads a submission: `mkldnn_prepacked`, `sparse`, `inductor`, ... beside aten) and the vendor ones above."""
    return frozenset({n.partition("::")[0] for n in torch._C._dispatch_get_all_op_names()} | FRAMEWORK_OP_NAMESPACES)


def _op_tokens(name: str) -> tuple[str, ...] | None:
    """A framework op's name as words ("aten::_masked_softmax" -> masked, softmax; "mkldnn::_linear_pointwise" ->
    linear, pointwise; "aten::gelu_" -> gelu), or None for an op of any other namespace."""
    ns, _, op = name.partition("::")
    if not op or ns not in framework_namespaces():
        return None
    return tuple(w for w in op.split(".")[0].strip("_").split("_") if w)


def _names_family(tokens: tuple[str, ...], family_ops: list[str]) -> bool:
    """A family's op among the words, in a row: variants (in place, fused, masked, vendor-prefixed, pointwise
    epilogues) carry the op's own words, and a name that merely contains its letters (bilinear, convert) does not."""
    for op in family_ops:
        words = tuple(w for w in op.strip("_").split("_") if w)
        if any(tokens[i:i + len(words)] == words for i in range(len(tokens) - len(words) + 1)):
            return True
    return False


def _families(ops: set[str], kernels: set[str], families: list[str], own: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    """The op families among these framework ops and GPU kernels of the framework or a vendor library (a kernel of
    the submission's own, `own`, may well be named after its op): {family: evidence}."""
    found = {}
    library = {k for k in kernels if library_kernel(k, own)}
    words = {op: t for op in ops if (t := _op_tokens(op))}
    for fam in families:
        spec = OP_FAMILIES[fam]
        ev = sorted(op for op, t in words.items() if _names_family(t, spec["ops"]))
        ev += sorted(k for k in library if re.search(spec["kernels"], k, re.I))[:3]
        if ev:
            found[fam] = ev[:6]
    return found


def defined_in(function: str, code: str) -> bool:
    """Whether a demangled function's own name (no scope, template or arguments) is a word of the submission's source:
    a function of its build it did not write (a library's, copied there under its own names) is not."""
    name = re.sub(r"<[^<>]*>", "", function.replace("(anonymous namespace)", "anon").split("(", 1)[0])
    base = name.rsplit("::", 1)[-1].strip()
    return bool(base) and re.search(rf"(?<!\w){re.escape(base)}(?!\w)", code) is not None


def sampled_families(functions: dict[str, float], families: list[str]) -> dict[str, list[str]]:
    """The op families whose framework functions the sampler found the timed calls in ({demangled name: CPU ms}),
    at FAMILY_SAMPLES_MIN samples or more a family: the CPU's kernel names, whoever called the function (through an op,
    by address, from an extension). {family: evidence}."""
    found = {}
    for fam in families:
        pattern = re.compile(OP_FAMILIES[fam]["cpu"], re.I)
        hits = sorted(((ms, m) for name, ms in functions.items() if (m := pattern.search(name))),
                      key=lambda hit: -hit[0])
        if sum(ms for ms, _ in hits) >= FAMILY_SAMPLES_MIN * PERIOD_NS / 1e6:
            found[fam] = [f"{_word_around(m)} sampled in the timed calls ({ms:.1f} ms)" for ms, m in hits[:3]]
    return found


def _word_around(m: re.Match) -> str:
    """The identifier a match lies in ("LayerNormKernelImplInternal" around "LayerNorm")."""
    text, lo, hi = m.string, m.start(), m.end()
    while lo > 0 and (text[lo - 1].isalnum() or text[lo - 1] == "_"):
        lo -= 1
    while hi < len(text) and (text[hi].isalnum() or text[hi] == "_"):
        hi += 1
    return text[lo:hi]


def _profile_ref(ref, inputs, device):
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=acts) as prof:
        _call(ref, clone_inputs(inputs), 0, "the reference")
        timing.synchronize(device)
    ops = {e.name for e in prof.events() if "::" in e.name and e.device_type != torch.autograd.DeviceType.CUDA}
    kernels = {e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}
    return ops, kernels


def profile_checks(cand, mod, ref, rules, device, precision, atol, rtol, res, ctx, job: dict | None = None) -> None:
    """The reference's heavy op families that the candidate also runs (by framework op in any variant, or by the
    vendor kernel that does the work, whoever launched it), and whether any kernel of its own ran; the profiled call
    must be the work the timed calls did: right outputs, and no far longer busy time."""
    files = built_files(job) if job else []  # read once: the kernels it defines, the framework's it links
    built, own = b"".join(data for _, data in files), own_kernels(job, files) if job else frozenset()
    inputs = fresh_inputs(mod, device, ctx)
    ref_ops, ref_kernels = _profile_ref(ref, inputs, device)
    ops, kernels, busy, accounted = set(), set(), [], []
    for attempt in range(PROFILED_CALLS):
        if attempt:
            inputs = fresh_inputs(mod, device, ctx)
        rng = draw_seed()
        ref_out = _call(ref, clone_inputs(inputs), rng, "the reference")
        before = _cpu_split(cand, before=True)
        reply, outs, why = _profiled_call(cand, inputs, ref_out, rng, device, res)
        own_cpu_ms = _others_unseen(before, _cpu_split(cand, before=False), res)
        passed, why, _, _ = judged(ref_out, outs, why, rules, atol, rtol)
        if not passed:  # a call that did nothing while observed shows nothing of the work it hides elsewhere
            flag(res, "profile_mismatch", f"the profiled call's outputs are wrong ({why}): what the profiler saw is "
                                          "not the work the timed calls did")
        for key, names in (("ops", ops), ("kernels", kernels)):
            got = channel.string_list(reply, key, channel.PROFILE_LIST_MAX, 300)
            if len(got) >= channel.PROFILE_LIST_MAX:  # a list cut at its length may have lost the framework's names
                flag(res, "check_failed", f"profile: {key} reached the {channel.PROFILE_LIST_MAX} names the judge reads")
            names.update(got)
        if device.type == "cpu" and reply.get("all_threads") is not True:
            res["flag_details"]["profile_threads"] = "the profile saw the calling thread only (this torch records no other)"
        busy.append(channel.field(reply, "busy_ms", float))
        if device.type == "cpu":
            accounted.append(_cpu_bounded(channel.field(reply, "framework_busy_ms", float), own_cpu_ms))
            bounded = _cpu_bounded(busy[-1], own_cpu_ms)
            if bounded < busy[-1]:  # the ops' claimed time, kept where waiting (for a CPU on a loaded host) cut it
                res["flag_details"].setdefault("profiled_busy_claimed_ms", []).append(round(busy[-1], 4))
                busy[-1] = bounded
        if not passed or busy_limit(min(busy), rules, device, res) is None:
            break
    observed_as_timed(busy, rules, device, res)
    forbidden = rules.get("forbidden_op_families") or []
    ref_fams = _families(ref_ops, ref_kernels, forbidden)
    barred = set(ref_fams).union(*(SUBSTITUTE_FAMILIES.get(f, ()) for f in ref_fams)) & set(forbidden)
    if device.type == "cpu":
        res["flag_details"]["profiled_framework_ops_ms"] = round(min(accounted), 4)
        framework_unseen(cand, min(accounted), rules, res, sorted(barred))
    linked = linked_framework_ops(built)  # run by the extension itself, where no profiler sees them
    if linked:
        res["flag_details"]["linked_framework_kernels"] = sorted(linked)[:20]
        ops |= linked
    copied = collections.Counter()
    for _, data in files if device.type == "cpu" else ():  # where the sampler decides what code is the framework's
        copied.update(framework_pages_in(data))
    if sum(copied.values()) >= COPIED_PAGES_MIN:
        flag(res, "calls_reference_ops", "the build carries the framework's machine code, copied: "
             + ", ".join(f"{n} pages of {lib}" for lib, n in copied.most_common(3)))
    if any(mark in built for mark in _INDUCTOR_MARKS):
        flag(res, "calls_reference_ops", "the build holds torch.compile's generated code (Inductor's or AOTInductor's)")
    compiled = sorted(op for op in ops if op.startswith(channel.COMPILED_OP_PREFIX))
    if compiled:
        flag(res, "calls_reference_ops", "torch.compile's generated code ran in the profiled call: "
                                         + ", ".join(op.removeprefix(channel.COMPILED_OP_PREFIX) for op in compiled[:3]))
    cand_fams = _families(ops, kernels, sorted(barred), own)
    if device.type == "cpu":
        timed = cand.sampled.get("timing", {})
        functions, installed = timed.get("functions", {}), timed.get("installed_functions", {})  # a library's own names
        foreign = {n: ms for n, ms in timed.get("built_functions", {}).items()
                   if not defined_in(n, (job or {}).get("submission_code", ""))}
        for fam, ev in sampled_families({**foreign, **installed, **functions}, sorted(barred)).items():
            cand_fams.setdefault(fam, []).extend(ev)
        if functions:
            top = sorted(functions.items(), key=lambda kv: -kv[1])[:10]
            res["flag_details"]["framework_functions_ms"] = {name[:160]: round(ms, 1) for name, ms in top}
    if cand_fams:
        name = lambda f: f if f in ref_fams else f"{f} (in place of the reference's {', '.join(sorted(ref_fams))})"
        flag(res, "calls_reference_ops", "the candidate runs the reference's heavy work through the framework: "
              + "; ".join(f"{name(f)}: {', '.join(ev)}" for f, ev in sorted(cand_fams.items())))
    if device.type == "cuda":
        res["flag_details"]["kernels"] = sorted(kernels)[:40]
        custom = sorted(k for k in kernels if not library_kernel(k, own))
        if not custom:
            flag(res, "no_custom_kernel", "the profiler saw only framework kernels"
                  + (f": {', '.join(sorted(kernels)[:6])}" if kernels else " (none at all)"))
        if precision == "fp32":
            low = sorted(k for k in kernels if REDUCED_PRECISION_KERNEL_RE.search(k))
            if low:
                res["flag_details"]["reduced_precision_kernels"] = low[:10]
    else:
        res["flag_details"]["cpu_ops"] = sorted(ops)[:40]


def _profiled_call(cand, inputs: list, ref_out, rng: int, device, res) -> tuple[dict, list | None, str | None]:
    """The candidate's profiled call, its inputs written only once it says its profiler runs (the timed batches'
    gate, without a held stream): work that a thread of the submission starts on them, as they arrive, is then
    recorded too."""
    msg = {"cmd": "profile", "inputs": cand.slot_inputs(inputs, write=False), "outputs": cand.out_slots(ref_out),
           "rng": rng, "gate": cand.next_gate()}

    def ready(held: bool):
        if not held:
            flag(res, "check_failed", "profile: the candidate's inputs were written before it said its profiler ran")
        cand.slot_inputs(inputs, sync=False)
        timing.synchronize(device)

    reply = cand.request(msg, "profile", ready=ready, queue_wait_s=PROFILER_START_S)
    outs, why = cand.outputs(reply, ref_out)
    cand.check_input_slots(inputs)
    return reply, outs, why


def busy_limit(busy_ms: float, rules, device, res) -> float | None:
    """The limit a profiled call's busy time is over (the rules' slack times the timed median, plus the device's
    margin), or None when within it or nothing was timed."""
    timed = res.get("sol_ms")
    if timed is None:
        return None
    limit = rules["profile_busy_slack"] * timed + rules["profile_busy_margin_ms" if device.type == "cuda"
                                                        else "profile_busy_margin_ms_cpu"]
    return limit if busy_ms > limit else None


def observed_as_timed(busy: list[float], rules, device, res) -> None:
    """The profiled calls against the timed ones: a submission that behaves differently while a profiler records
    (its own slow kernel there, the framework's op in the timed calls) shows more work in every profile than its
    timed calls took; the least busy profiled call is judged, so that one call that lost time slices to another
    process is not a mismatch. Busy time is the profiler's (a claim, like its op list), the timed median the bounded
    one."""
    res["flag_details"]["profiled_busy_ms"] = round(min(busy), 4)
    if len(busy) > 1:
        res["flag_details"]["profiled_busy_ms_each"] = [round(b, 4) for b in busy]
    limit = busy_limit(min(busy), rules, device, res)
    if limit is not None:
        flag(res, "profile_mismatch", f"the profiled call kept the {'GPU' if device.type == 'cuda' else 'CPU'} busy "
                                      f"{min(busy):.4g} ms at least ({len(busy)} profiled), its timed calls took "
                                      f"{res['sol_ms']:.4g} ms (limit {limit:.4g} ms): what the profiler saw is not what "
                                      "was timed")


SAMPLES_LOST_MAX = 0.1  # the share of a grading's timed samples its rings may lose


def framework_unseen(cand, busy_ms: float, rules, res, barred: list[str] = ()) -> None:
    """The framework's code that the timed calls ran, as the kernel sampled it on a CPU (torch's libraries, the BLAS
    and oneDNN ones, code generated at run time), past what a no-work call of the harness runs there (calibrated
    before the submission loaded), against the time the profile's ops cover on the candidate's threads: more is
    framework work reached below the dispatcher (by address through ctypes, from a native extension), which no op
    names. Samples the judge named, in functions of no family the problem bars (`barred`), are work the problem
    allows whoever called it (an elementwise kernel, a reduction, numpy's BLAS row sums in a LayerNorm): only unnamed
    framework code (generated at run time, or of a library the judge has not loaded) and the barred families' count.
    Where the problem bars a family whose CPU kernels the framework generates at run time (a GEMM's), the profile
    buys no allowance: that code is the barred work itself. A sampler the kernel refused from the start is noted (as
    a sandbox without a cgroup is); one that sampled the calibration, before the submission loaded, and failed after
    it, or saw no timed batch, fails the check (a mapping named in bytes no decoder took switched it off for the rest
    of a grading, with only that note: red team, session 42)."""
    if cand.sampler_error is not None:
        if cand.device.type == "cpu" and cand.sampled.get("calibration"):
            flag(res, "check_failed", f"framework samples: the sampler stopped after the calibration: {cand.sampler_error}")
        elif cand.device.type == "cpu":
            res["flag_details"]["framework_samples"] = f"unavailable: {cand.sampler_error}"
        return
    timed, idle = cand.sampled.get("timing"), cand.sampled.get("calibration")
    if not (timed and idle and timed["calls"] and idle["calls"]):
        flag(res, "check_failed", "framework samples: no timed batch was sampled")
        return
    lost = timed.get("lost_samples", 0)
    if lost > max(SAMPLES_LOST_MAX * (lost + timed.get("samples", 0)), 20) or (lost and timed.get("mapped")):
        # rings kept full lose the samples of what ran meanwhile, and the records of code mapped (a flood of mappings
        # would lose the one that placed the code); the judge drains them often enough that an honest batch loses none
        flag(res, "check_failed", f"framework samples: {lost} records of the timed calls lost to full rings "
                                  f"({timed.get('mapped')} executable mappings made meanwhile)")
        return

    barred_code = re.compile("|".join(OP_FAMILIES[f]["cpu"] for f in barred), re.I) if barred else None

    def allowed(acc: dict) -> float:
        return sum(ms for name, ms in acc.get("functions", {}).items()
                   if name != "?" and not (barred_code and barred_code.search(name))) / acc["calls"]

    def per_call(acc: dict) -> float:
        return acc["framework_ms"] / acc["calls"] - allowed(acc)

    timed_ms, idle_ms, threads = per_call(timed), per_call(idle), cpu_threads()
    excess = timed_ms - idle_ms
    # of it in code made at run time (reported: held to the margin alone, it failed an honest all-cores LayerNorm at
    # 135 ms a call in a fresh clone under /tmp, session 44: libgomp taken for the build's, sampler._in_work_dir)
    generated_ms = max(0.0, (timed.get("generated_ms", 0.0) / timed["calls"]
                             - idle.get("generated_ms", 0.0) / idle["calls"]))
    # of it in code the judge's reads while the batch ran found gone, blank or changed: code hidden, moved or rewritten
    # around its runs, which no search can name, held to the margin
    unread_ms = (timed.get("unread_ms", 0.0) / timed["calls"] - idle.get("unread_ms", 0.0) / idle["calls"])
    # the profile's ops buy an allowance only for the framework work they really do in the timed calls: real ops run
    # in the profiled call alone, as padding, are not in the timed calls' named samples
    backed_ms = max(0.0, allowed(timed) - allowed(idle))
    generating = sorted(set(barred) & set(CPU_CODE_GENERATING_FAMILIES))
    allowance = 0.0 if generating else rules["framework_unseen_slack_cpu"] * min(busy_ms, backed_ms) * threads
    limit = allowance + rules["framework_unseen_margin_ms_cpu"]
    res["flag_details"]["framework_samples"] = details = {"timed_call_ms": round(timed_ms, 3),
                                                          "no_work_call_ms": round(idle_ms, 3),
                                                          "profiled_ops_ms": round(busy_ms, 3),
                                                          "named_allowed_call_ms": round(backed_ms, 3), "threads": threads,
                                                          "generated_call_ms": round(generated_ms, 3),
                                                          "unread_call_ms": round(unread_ms, 3),
                                                          # the judge's search of code made at run time for copies
                                                          "copy_search_ms": round(timed.get("copy_search_ms", 0.0), 1),
                                                          "new_threads": timed["new_threads"]}
    if all("cgroup_ms" in acc and not acc.get("cgroup_unavailable") for acc in (timed, idle)):
        unsampled = lambda acc: (acc["cgroup_ms"] - acc["cpu_ms"]) / acc["calls"]  # noqa: E731
        details["unsampled_call_ms"], details["unsampled_no_work_call_ms"] = round(unsampled(timed), 3), round(unsampled(idle), 3)
        # the cgroup counts every thread, those that started and ended within a batch too; the sampler only those
        # alive when it started: honest work shows 0.00-0.06 ms a call between the two. A no-work figure under 0 is
        # the two clocks read apart on a loaded host (-1.08 ms a call beside an honest 0.118 failed a record, session
        # 46): it is taken as 0, which only a check it would have made stricter loses
        if unsampled(timed) - max(0.0, unsampled(idle)) > rules["framework_unseen_margin_ms_cpu"]:
            flag(res, "check_failed", f"framework samples: {unsampled(timed):.3g} ms of CPU a call ran in threads "
                                      "the sampler could not follow (started and ended within a timed batch; by "
                                      f"batch {timed.get('unsampled_by_batch')}, no-work {unsampled(idle):.3g})")
    if unread_ms > rules["framework_unseen_margin_ms_cpu"]:
        flag(res, "check_failed", f"framework samples: {unread_ms:.3g} ms of CPU a call ran in code made at run time "
                                  "that the judge's reads while the batch ran found gone, blank or changed (code "
                                  "hidden, moved or rewritten around its runs: what it was cannot be told)")
    replaced = sorted(set(timed.get("tampered", [])) | set(idle.get("tampered", [])))
    if replaced:
        flag(res, "check_failed", f"framework samples: the code of {', '.join(replaced)} in the sandbox is mapped "
                                  "otherwise than the library maps (pages replaced or moved): its samples would carry "
                                  "another mapping's name")
    if timed["new_threads"]:
        flag(res, "check_failed", f"framework samples: {timed['new_threads']} thread(s) started during timed batches, "
                                  "which the sampler could not follow")
    if excess > limit and generating:
        flag(res, "calls_reference_ops", f"the timed calls ran {excess:.3g} ms of CPU a call in the framework's code "
                                         f"that is unnamed (generated at run time) or of a barred family (limit "
                                         f"{limit:.3g} ms): this problem bars {', '.join(generating)}, whose CPU "
                                         "kernels the framework generates at run time, so that code is their work")
    elif excess > limit:
        flag(res, "profile_mismatch", f"the timed calls ran {excess:.3g} ms of CPU a call in the framework's code past "
                                      f"the harness's own, the profile's ops cover {busy_ms:.3g} ms on {threads} "
                                      f"thread(s), {backed_ms:.3g} ms of which their named functions ran in the timed "
                                      f"calls (limit {limit:.3g} ms; {generated_ms:.3g} ms of it in code made at run "
                                      "time): framework work no op names")


# Pages of a framework library's code in a build that make it a copy (a few could be common runtime code)
COPIED_PAGES_MIN = 8


# Samples of a family's framework functions that make it the candidate's: one can be stray (session 38 tried one, and
# an MoE that never calls it had a sample named linalg_inv, `calls_reference_ops`)
FAMILY_SAMPLES_MIN = 3


# Profiled calls at most: another (fresh inputs) only while each so far was wrong-free but over the busy limit (two
# slow ones in a row befell an honest all-cores LayerNorm on a loaded CPU, session 29)
PROFILED_CALLS = 3


# How long the judge waits for the candidate's profiler to start (CUPTI's first start takes a second or more)
PROFILER_START_S = 60.0


# CPU time of the submission's other processes during the profiled call that fails it: honest submissions have none
# (0.000 ms measured); the profiler's own start and stop are the profiled process's
PROFILE_OTHERS_MS = 0.02


def _cpu_split(cand, before: bool) -> tuple[float, float] | None:
    """(the sandbox's CPU time, its harness processes' part) on a CPU grading with a cgroup, else None. The two are
    read apart; before the call the harness's part first, after it last, so that the harness's own threads running
    meanwhile can only lower the others' share, never raise it."""
    reads = [cand.sb.harness_cpu_ms, cand.cpu_ms] if before else [cand.cpu_ms, cand.sb.harness_cpu_ms]
    first = reads[0]()
    second = reads[1]() if first is not None else None
    if second is None:
        return None
    return (second, first) if before else (first, second)


def _others_unseen(before, after, res) -> float | None:
    """The profile sees the candidate's own process: CPU work that the sandbox's other processes (children the
    submission forked) did during the profiled call is work it could not see, so the check could not run. Returns the
    profiled process's own CPU time over the call (None without a cgroup)."""
    if before is None or after is None:
        return None
    ours = after[1] - before[1]
    others = (after[0] - before[0]) - ours
    res["flag_details"]["profile_other_processes_ms"] = round(others, 3)
    if others > PROFILE_OTHERS_MS:
        flag(res, "check_failed", f"profile: other processes of the sandbox used {others:.3g} ms of CPU during the "
                                  f"profiled call ({ours:.3g} ms in the profiled process), work the profile cannot see")
    return ours


def _cpu_bounded(claimed_ms: float, own_cpu_ms: float | None) -> float:
    """A time the profiled call claims (its ops' busy time; its framework ops', the outermost operators the framework
    defined), at most the CPU time the profiled process really used over the call: a range or an op that sleeps,
    waits or waits for a CPU accounts for nothing."""
    return claimed_ms if own_cpu_ms is None else min(claimed_ms, own_cpu_ms)

"""The trust boundary: what a hostile submission cannot do, checked by its side effects (tests/corpus/hostile/).

The verdicts of the hostile entries are checked with the rest of the corpus (test_anticheat.py); here each
attack's target is looked at after grading: files it wrote to, processes it left, connections it opened,
messages the judge sent it. They run at the level this machine offers (`strong` as root with util-linux).
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest
import torch

from kb_data.harness import judge as judge_mod
from kb_data.harness import confine, sandbox, session
from kb_data.harness.grade import Options, grade
from kb_data.problems import ProblemSet
from tests.corpus import CORPUS, SMALL_PROBLEMS
from tests.harness_support import HONEST_GELU, _judge

GELU = "v3/level1/26_GELU_"
# the attacks really write, connect and hoard: only where the sandbox gets a uid of its own (root), so that a
# broken sandbox cannot damage this checkout
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the sandbox's own uid")
HOSTILE = CORPUS / "hostile"


def _grade(entry: str, problem: str = GELU, **kw):
    p = ProblemSet(SMALL_PROBLEMS).load(problem)
    opt = Options(device="cpu", trials=3, warmup=1, timeout_s=300, **kw)
    rec, _ = grade(p, (HOSTILE / f"{entry}.py").read_text(), name=f"{entry}.py", options=opt)
    return rec


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_the_level_is_the_strongest_available_and_recorded():
    rec = _grade("float64_output")
    expected = "strong" if sandbox.strong_available() is None else "process"
    assert rec.sandbox == expected, (rec.sandbox, sandbox.strong_available())
    assert rec.status == "incorrect" and "dtype float64, expected float32" in rec.error


def test_strict_refuses_where_the_strong_level_is_unavailable(monkeypatch):
    sandbox.strong_available.cache_clear()
    monkeypatch.setattr(sandbox, "strong_available", lambda: "no namespaces here")
    with pytest.raises(sandbox.SandboxUnavailable, match="no namespaces here"):
        sandbox.resolve_level("strict")
    assert sandbox.resolve_level("auto") == "process"
    assert sandbox.resolve_level("none") == "none"
    with pytest.raises(ValueError, match="unknown sandbox level"):
        sandbox.resolve_level("medium")


def test_writes_outside_its_temp_dir_fail(tmp_path):
    records = tmp_path / "out" / "records.jsonl"
    records.parent.mkdir()
    records.write_text(json.dumps({"status": "incorrect", "problem_id": GELU}) + "\n")
    watched = [records, Path(judge_mod.__file__).with_name("grade.py"), Path.home() / ".bashrc"]
    before = {p: _sha(p) for p in watched if p.exists()}
    rec = _grade("write_outside")
    assert rec.status == "ok", rec.error
    assert {p: _sha(p) for p in before} == before
    assert not Path("/etc/kb_hostile").exists()


def test_it_opens_a_few_pseudo_terminals_of_its_own_and_none_of_the_hosts():
    """The host's ptys (kernel.pty.nr counts every devpts instance's) stay the host's: the hoarder opens as many as its
    own instance holds while a thread here watches the count (red team, session 38: /dev/ptmx was the host's)."""
    if sandbox.strong_available() is not None:
        pytest.skip(f"the strong level is unavailable here: {sandbox.strong_available()}")
    count = lambda: int(Path("/proc/sys/kernel/pty/nr").read_text())
    before, seen, done = count(), [], threading.Event()

    def watch():
        while not done.is_set():
            seen.append(count())
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        rec = _grade("pty_hoard_gelu", require_custom_kernel=False)
    finally:
        done.set()
        watcher.join()
    assert rec.status == "ok", rec.error
    assert max(seen) - before == confine.PTYS, (before, max(seen))  # it got its own few, and no more


def test_a_work_dir_too_deep_for_python_is_removed_and_the_verdict_stands():
    """A chain of 3000 folders took shutil.rmtree past Python's recursion limit as the sandbox closed: the rejection
    became `crashed` and the folder and cgroup stayed on the host (red team, session 38)."""
    chains = os.path.join(tempfile.gettempdir(), "kb-sandbox-*", "work", "d")  # its chain starts so; no other's does
    before = set(glob.glob(chains))
    rec = _grade("deep_tree_launders_a_rejected_verdict_gelu")
    assert rec.status == "rejected" and "calls_reference_ops" in rec.flags, (rec.status, rec.error)
    assert set(glob.glob(chains)) <= before


def test_a_sparse_log_of_gigabytes_is_read_from_its_end():
    """The judge kept a crashed sandbox's last 2000 bytes of log by reading all of it: a sparse log of 3 GiB (one
    ftruncate, no disk) made the judge hold 3 GiB (hostile/sparse_log_read_whole_by_judge_gelu)."""
    import resource

    from kb_data.io import tail_text

    with tempfile.NamedTemporaryFile(dir=tempfile.gettempdir()) as f:
        f.write(b"first words\n")
        f.truncate(3 << 30)
        f.seek(3 << 30)
        f.write(b"last words\n")
        f.flush()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert tail_text(f.name).endswith("last words") and len(tail_text(f.name, 100)) <= 100
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 64 << 10  # KiB: no gigabytes read


def test_nothing_it_starts_outlives_its_grading():
    sandboxes_before = set(glob.glob(os.path.join(tempfile.gettempdir(), "kb-sandbox-*")))
    rec = _grade("setsid_escapee")
    assert rec.status == "ok", rec.error

    def escapees() -> list[str]:
        left = []
        for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
            try:
                if b"kb-hostile-escapee" in Path(cmdline).read_bytes():
                    left.append(cmdline)
            except OSError:
                pass
        return left

    # the corpus test grades the same entry in another worker: its escapee goes when that grade ends; a leaked one
    # sleeps its ten minutes
    deadline = time.monotonic() + 60
    while (left := escapees()) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left
    # temp dirs removed; those of grades running beside this one (other test workers) go when they end, a leaked
    # one never does
    extra = set(glob.glob(os.path.join(tempfile.gettempdir(), "kb-sandbox-*"))) - sandboxes_before
    deadline = time.monotonic() + 120
    while extra and time.monotonic() < deadline:
        time.sleep(0.5)
        extra = {d for d in extra if os.path.exists(d)}
    assert not extra


def test_no_connection_leaves_the_sandbox():
    """Strong: a network namespace with no usable device; process: no socket of its own (until session 46 the
    process level reached the host's loopback, which this test let pass). One test for both levels: the entry's port
    is fixed, and two tests listening on it at once would fail."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 47811))
    srv.listen(4)
    srv.settimeout(0.2)
    seen, stop = [], threading.Event()

    def accept():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                seen.append(conn.recv(64))
                conn.close()
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        recs = [_grade("network_connect", sandbox=level) for level in ("strong", "process")]
    finally:
        stop.set()
        t.join(2)
        srv.close()
    assert [(r.status, r.sandbox) for r in recs] == [("ok", "strong"), ("ok", "process")], [r.error for r in recs]
    assert seen == []


def test_a_pickle_on_the_channel_is_never_unpickled():
    marker = Path("/tmp/kb_hostile_pickle_ran")
    marker.unlink(missing_ok=True)
    rec = _grade("pickle_payload")
    assert rec.status == "crashed" and "not a JSON message" in rec.error, rec.error
    assert not marker.exists()


def test_a_reply_field_past_any_float_or_64_bits_is_the_candidates_channel_error():
    """JSON integers have no size limit: a claim of 10**400 ms once raised OverflowError in the judge, which took it
    for its own failure (hostile/huge_integer_in_replies_gelu, rejected since)."""
    from kb_data.harness import channel

    for kind, bad in ((float, 10 ** 400), (float, -1), (float, float("nan")), (int, 1 << 63), (int, -(1 << 63)), (int, True)):
        with pytest.raises(channel.ChannelError):
            channel.field({"v": bad}, "v", kind)
    assert channel.field({"v": (1 << 63) - 1}, "v", int) == (1 << 63) - 1 and channel.field({"v": 3}, "v", float) == 3.0
    with pytest.raises(channel.ChannelError):
        channel.float_list({"v": [1.0, 10 ** 400]}, "v")


def test_a_memory_overrun_is_its_own_status_with_the_figure():
    rec = _grade("big_allocation", memory_limit_gb=3)
    assert rec.status == "memory_exceeded", (rec.status, rec.error)
    assert "GiB is over the sandbox's limit of 3.00 GiB" in rec.error


def test_the_candidate_never_receives_a_seed(monkeypatch):
    """Every message the judge sends is recorded; no seed it drew inputs with (the secret one included) is in
    any of them. The judge runs in this process here, the candidate in its sandbox as always."""
    from kb_data.harness import channel

    sent, seeds = [], []
    real_send, real_make = channel.send, judge_mod.make_inputs
    monkeypatch.setattr(channel, "send", lambda sock, msg, fds=(): (sent.append(json.dumps(msg)), real_send(sock, msg, fds))[1])
    recording = lambda mod, seed, device: (seeds.append(seed), real_make(mod, seed, device))[1]
    monkeypatch.setattr(judge_mod, "make_inputs", recording)  # the correctness seeds, the secret one included
    monkeypatch.setattr(session, "make_inputs", recording)    # every check's and every timed call's fresh draw
    p = ProblemSet(SMALL_PROBLEMS).load(GELU)
    res = _judge(p, (CORPUS / "honest" / "torch_gelu_erf.py").read_text(), trials=3)
    assert res["status"] == "ok", res["error"]
    assert len(seeds) > 10 and len(sent) > 10
    numbers = set()
    for m in sent:
        numbers |= _ints(json.loads(m))
    leaked = [s for s in seeds if s in numbers and s > 10_000]  # the published seeds are small; drawn ones are not
    assert not leaked, leaked


def test_v01_timed_calls_run_on_secretly_loaded_weights(monkeypatch):
    """v0.1 builds the candidate from the init seed (its published semantics), but its timed calls and checks run
    on secretly perturbed weights loaded after the published seeds, as v3's do: before, nothing was loaded until
    the weights check after timing, so a model that followed weights only once loaded skipped them when timed."""
    from kb_data.harness import channel

    events = []
    real_send = channel.send

    def send(sock, msg, fds=()):
        if isinstance(msg, dict) and msg.get("cmd") not in ("spawn", "status"):  # not the judge's talk with its spawner
            events.append(msg.get("cmd"))
        return real_send(sock, msg, fds)

    monkeypatch.setattr(channel, "send", send)
    p = ProblemSet(SMALL_PROBLEMS).load("v0.1/level1/40_LayerNorm")
    res = _judge(p, p.code.replace("class Model(", "class ModelNew("), trials=8, max_batch=4)
    assert res["status"] == "ok", res["error"]
    graded = events[events.index("load"):]  # the calibration's timed calls come before the submission is loaded
    assert "timed" in graded and graded.index("load_weights") < graded.index("timed"), " ".join(map(str, events))
    assert "secret_weights_seed" in res["flag_details"]


def _ints(x) -> set:
    """Every integer in a message, and every run of digits in its strings."""
    import re

    if isinstance(x, bool):
        return set()
    if isinstance(x, int):
        return {x}
    if isinstance(x, str):
        return {int(t) for t in re.findall(r"\d+", x)}
    if isinstance(x, dict):
        return set().union(*(_ints(v) for v in x.values()), *(_ints(k) for k in x)) if x else set()
    if isinstance(x, list):
        return set().union(*(_ints(v) for v in x)) if x else set()
    return set()


def test_every_flag_has_a_registered_check_that_exists_and_a_row_in_the_readme():
    """harness/checks.py names, for every flag, the function that decides it and where; README's hack table must
    name every flag a check raises, so the table cannot drift from the code."""
    import importlib

    from kb_data.harness.checks import CHECKS
    from kb_data.schema import FLAGS, INFORMATIONAL_FLAGS

    assert set(CHECKS) == set(FLAGS)
    for flag, check in CHECKS.items():
        module, qualname = check.decided_by.split(":")
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        assert callable(obj), check
        assert check.where in ("judge", "claim", "parent")
    table = Path(__file__).resolve().parents[1].joinpath("README.md").read_text().split("## Reward hacks")[1]
    table = table.split("\n## ")[0]
    missing = [f for f in FLAGS if f"`{f}`" not in table and f != "output_reused_memory"]
    assert not missing, missing
    assert set(INFORMATIONAL_FLAGS) <= set(FLAGS)


def test_the_weights_report_keeps_state_dict_keys_only():
    """What a candidate says its load_state_dict missed lands in a published record: only key-shaped names it had
    and keys the judge sent are kept, the rest counted."""
    state = {"weight": None, "bias": None}
    reply = {"missing": ["layers.0.weight", "blocks.conv-1.bias", "TOKEN=hf_abc123 /root/.cache"],
             "unexpected": ["bias", "not sent"]}
    assert judge_mod._weights_loaded(reply, state) == {"missing": ["layers.0.weight", "blocks.conv-1.bias"],
                                                       "unexpected": ["bias"], "not_keys": 2}
    assert judge_mod._weights_loaded({"missing": [], "unexpected": ["weight"]}, state) == {"missing": [],
                                                                                           "unexpected": ["weight"]}


def test_a_profiled_call_whose_inputs_were_written_before_its_profiler_ran_fails_the_check(monkeypatch):
    """The profiled call's inputs are written once the candidate says its profiler runs, so that work a thread starts
    on them as they arrive is recorded; a judge that had to write them first (no word from the candidate in time: here
    the profile's wait finds none, and its late word is passed over as a timed batch's is) cannot call the profile
    complete."""
    queued = session.Candidate._queued

    def none_in_time(cand, wait_s):
        return None if cand.stage == "profile" else queued(cand, wait_s)

    monkeypatch.setattr(session.Candidate, "_queued", none_in_time)
    p = ProblemSet(SMALL_PROBLEMS).load(GELU)
    res = _judge(p, (CORPUS / "honest" / "torch_gelu_erf.py").read_text(), trials=5)
    assert "check_failed" in res["flags"], (res["status"], res["flags"])
    assert "before it said its profiler ran" in res["flag_details"]["check_failed"]
    monkeypatch.undo()
    res = _judge(p, (CORPUS / "honest" / "torch_gelu_erf.py").read_text(), trials=5)
    assert res["status"] == "ok" and "check_failed" not in res["flags"], (res["error"], res["flags"],
                                                                         res["flag_details"].get("check_failed"))


def test_a_batch_queued_after_the_gate_opened_on_its_own_is_graded_as_any_other(monkeypatch):
    """A forward that waits for the GPU cannot queue its whole batch behind the gate, and the judge opens it after
    QUEUE_WAIT_S anyway: the inputs are written, the go is sent, and the batch's late word that it is queued is
    passed over. With no wait at all every batch takes that path, and the grading comes out as usual."""
    from kb_data.harness import channel

    sent = []
    real_send = channel.send

    def send(sock, msg, fds=()):
        if isinstance(msg, dict) and msg.get("cmd") in ("timed", "go", "profile"):
            sent.append(msg["cmd"])
        return real_send(sock, msg, fds)

    monkeypatch.setattr(session, "QUEUE_WAIT_S", 0.0)
    monkeypatch.setattr(channel, "send", send)
    p = ProblemSet(SMALL_PROBLEMS).load(GELU)
    res = _judge(p, (CORPUS / "honest" / "torch_gelu_erf.py").read_text(), trials=12, max_batch=4)
    assert res["status"] == "ok" and "timer_tampered" not in res["flags"], str(  # the bound's whole account too
        (res["error"], res["flags"], {k: res["flag_details"].get(k) for k in ("timer_tampered", "timing_bound")}))
    assert sent.count("timed") >= 4 and sent.count("go") == sent.count("timed") + sent.count("profile"), sent
    assert res["flag_details"]["timing_bound"]["gate"] == "the candidate's go"


SLOW_WHILE_PROFILED = '''
import math, time
import torch
import torch.nn as nn

PROFILED = [0]


class Model(nn.Module):
    def forward(self, x):
        if torch.autograd.profiler._is_profiler_enabled:
            PROFILED[0] += 1
            if PROFILED[0] <= SLOW_CALLS:  # ops kept busy for 80 ms of this thread's CPU (a loaded host's wall
                end = time.thread_time() + 0.08  # clock gave 20 ms of it), far past any limit of a GELU's timed call
                while time.thread_time() < end:
                    x.mul(1.0)
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
'''


@pytest.mark.parametrize("slow_calls, mismatch", [(1, False), (99, True)])
def test_one_profiled_call_that_lost_time_is_profiled_again_and_one_busy_in_every_profile_is_a_mismatch(slow_calls,
                                                                                                        mismatch):
    """A profiled call far busier than the timed calls is profiled again on fresh inputs (up to three in all), and the
    least busy one is judged: an honest call that lost time slices to another process (on a loaded CPU) passes; a
    submission that does other work whenever it is observed shows it every time and is flagged."""
    p = ProblemSet(SMALL_PROBLEMS).load(GELU)
    res = _judge(p, SLOW_WHILE_PROFILED.replace("SLOW_CALLS", str(slow_calls)), trials=5)
    each = res["flag_details"].get("profiled_busy_ms_each")
    assert each and len(each) == (3 if mismatch else 2) and each[0] >= 40, (res["status"], res["flags"], res["flag_details"])
    assert res["status"] == "ok" and res["flags"] == (["profile_mismatch"] if mismatch else []), str(
        (res["flags"], res["error"], {k: res["flag_details"].get(k) for k in res["flags"] + ["timing_bound"]}))
    if mismatch:
        assert "at least (3 profiled)" in res["flag_details"]["profile_mismatch"]


def test_a_user_range_on_the_gpus_timeline_is_no_kernel():
    """A record_function's range shows on the GPU's timeline as an event of the GPU; counted as a kernel, the
    harness's own `kb::profiled_forward` made every GPU submission one with a kernel of its own (the H200, session 27:
    `no_custom_kernel` never raised) and a submission's own range could name any "kernel" it liked."""
    from types import SimpleNamespace

    from kb_data.harness.candidate import _annotation
    from kb_data.harness.channel import FORWARD_MARK

    assert _annotation(SimpleNamespace(name=FORWARD_MARK, is_user_annotation=False))
    assert _annotation(SimpleNamespace(name="my_fast_kernel", is_user_annotation=True))
    assert _annotation(SimpleNamespace(name=FORWARD_MARK))  # a torch whose events do not say
    assert not _annotation(SimpleNamespace(name="void softmax_warp_forward<float>(float*)", is_user_annotation=False))


def test_only_the_frameworks_own_outermost_ops_account_for_framework_time():
    """The CPU time the framework's code may take past what the profile names rests on the framework's own operators:
    a user range (whatever its name: a sleeping one padded the allowance, red team session 27), an op the submission
    defines after the candidate started (in aten's namespace too) and an existing op given a kernel of the
    submission's (red team session 28: the GEMM as `aten::hypot`) account for nothing; an op inside another counts
    once; the judge holds the figure to the CPU the profiled process really used."""
    import time
    import warnings
    from types import SimpleNamespace

    from torch.profiler import ProfilerActivity, profile, record_function

    from kb_data.harness.candidate import Server, _registrations
    from kb_data.harness.profiled import _cpu_bounded

    server = SimpleNamespace(torch=torch, framework_ops=_registrations(torch))
    server._intact_ops = lambda names: Server._intact_ops(server, names)
    libs = [torch.library.Library("aten", "FRAGMENT"), torch.library.Library("aten", "IMPL")]
    libs[0].define("kb_test_defined_late(Tensor x) -> Tensor")
    libs[0].impl("kb_test_defined_late", lambda x: x.clone(), "CPU")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns of the override, the point here
        libs[1].impl("hypot", lambda a, b: torch.mul(a, b), "CPU")
    x = torch.randn(256, 256)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("aten::mm"):
            time.sleep(0.002)
            torch.add(x, 1)
        torch.ops.aten.kb_test_defined_late(x)
        torch.ones(4)
        torch.hypot(x, x)
    events = prof.events()
    intact = server._intact_ops({e.name for e in events})
    counted = sorted(e.name for e in events if Server._outermost_framework_op(server, e, intact))
    assert counted == ["aten::add", "aten::clone", "aten::mul", "aten::ones"], counted
    assert _cpu_bounded(3.0, 1.25) == 1.25 and _cpu_bounded(3.0, None) == 3.0 and _cpu_bounded(0.5, 2.0) == 0.5


def test_torch_compile_shows_in_the_profile_under_the_names_the_judge_reads():
    """torch.compile reached in any spelling (the static scan reads only `torch.compile`) leaves Dynamo's own events in
    the profile; the candidate reports them among its ops, and the judge fails the record on them
    (adversarial/framework_layernorm_compiled_at_run_time grades the whole path with Inductor)."""
    from torch.profiler import ProfilerActivity, profile

    from kb_data.harness.channel import COMPILED_REGION

    fn = getattr(torch, "com" + "pile")(lambda x: torch.nn.functional.layer_norm(x, (64,)), backend="eager")
    x = torch.randn(8, 64)
    fn(x)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn(x)
    names = {e.name for e in prof.events()}
    assert any(COMPILED_REGION.match(n) for n in names), sorted(names)[:20]
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        torch.nn.functional.layer_norm(x, (64,))
    assert not any(COMPILED_REGION.match(e.name) for e in prof.events())


def test_a_sandbox_that_does_not_freeze_for_its_reference_fails_the_grading(monkeypatch):
    """A freeze not complete within the judge's wait (one long system call: open/rt18_*, rt39d_*) leaves its
    processes beside the reference: `check_failed`. Here none is waited for."""
    from kb_data.harness import cgroup

    probe = cgroup.Cgroup.create(f"probe-{os.getpid()}") if sandbox.own_uid("strong") else None
    if probe is None:
        pytest.skip("the sandbox has a cgroup only where the harness runs as root with a writable cgroup v2")
    probe.remove()
    monkeypatch.setattr(cgroup, "FREEZE_WAIT_S", 0.0)
    res = _judge(ProblemSet(SMALL_PROBLEMS).load(GELU), (CORPUS / "honest" / "torch_gelu_erf.py").read_text(), trials=5)
    assert "check_failed" in res["flags"] and "did not freeze" in res["flag_details"]["check_failed"], res["flags"]


def test_a_judge_that_cannot_finish_its_checks_on_a_loaded_submission_rejects_it(monkeypatch):
    """Red team, session 42: what a submission leaves (a build file, a mapping) made judge-side readers raise, and
    the record was a runtime_error (reward 0) where the checks would have rejected it (-1). Once its code is loaded,
    a check the judge could not finish fails the submission, and the judge retires; before that it stays the
    judge's own runtime_error."""
    from kb_data.harness import profiled

    def cannot_read(built):
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")

    monkeypatch.setattr(profiled, "linked_framework_ops", cannot_read)
    res = _judge(ProblemSet(SMALL_PROBLEMS).load("v3/level1/26_GELU_"), HONEST_GELU, trials=3)
    assert res["status"] == "rejected" and res["flags"] == ["check_failed"] and res.get("retire"), res["status"]
    assert "ValueError: Exceeds the limit" in res["flag_details"]["check_failed"]


def _name_a_setsid_child_in_bytes_then_report(sock) -> None:
    """A child in a session of its own, named in bytes that are no UTF-8 and mapping a file so named."""
    import ctypes
    import mmap

    from kb_data.harness import channel

    if os.fork() == 0:
        os.setsid()
        ctypes.CDLL(None).prctl(15, ctypes.c_char_p(b"\xff\xfe-kb-left"), 0, 0, 0)  # PR_SET_NAME
        with open(os.path.join(os.fsencode(os.getcwd()), b"\xff\xfe.bin"), "w+b") as f:
            f.write(b"\0" * 4096)
            f.flush()
            mapped = [mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ)]  # kept while it sleeps
        channel.send(sock, {"child": os.getpid()})
        while mapped:
            time.sleep(60)
    while True:
        time.sleep(60)


def test_a_process_named_in_bytes_no_decoder_takes_is_still_the_sandboxs(monkeypatch):
    """Red team, session 42: /proc shows names and paths in their own bytes, which strict UTF-8 reads skipped: a child
    so named escaped the uid scan of a sandbox without a cgroup (alive after its grading), a file so named blinded
    the CPU sampler. Both are read as they are now, and the process is found, read and killed."""
    from kb_data.harness import channel, cgroup, procfs
    from kb_data.io import lock_dir

    if not sandbox.own_uid("process"):
        pytest.skip("a process sandbox gets a uid of its own only where the harness runs as root")
    monkeypatch.setattr(cgroup.Cgroup, "create", classmethod(lambda cls, *a, **k: None))  # a host without cgroup v2
    monkeypatch.setattr(cgroup.MemoryCap, "create", classmethod(lambda cls, *a, **k: None))
    sb = sandbox.Sandbox("process", sandbox.Limits(memory_bytes=1 << 30), "cpu", lock_dir())
    try:
        sb.start(_name_a_setsid_child_in_bytes_then_report)
        child = channel.recv(sb.sock, timeout_s=60)["child"]
        assert sb.cgroup is None and child in sb.pids(scan=True)
        assert procfs.parent_and_inner_pid(child) is not None
        named = [path for *_, path, _ in procfs.mappings(child) if path.endswith(".bin")]
        assert [os.path.basename(os.fsencode(p)) for p in named] == [b"\xff\xfe.bin"], named
    finally:
        sb.close()
    try:  # gone, or dead and waiting for init to reap it
        assert procfs.status_field(procfs.read_text(f"/proc/{child}/status"), "State").startswith("Z")
    except FileNotFoundError:
        pass

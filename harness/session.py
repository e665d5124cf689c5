"""The judge's handle on the sandboxed candidate: commands out, validated replies in, tensors through slots.

Trusted code (it runs in the judge's process). `Candidate` starts the sandbox and speaks the channel; the helpers
draw fresh secret inputs, hand them over and judge what comes back.
"""
from __future__ import annotations

import math
import os
import secrets
import select
import signal
import struct
import time
from contextlib import contextmanager

import torch

from kb_data.harness import candidate, channel, timing
from kb_data.harness.build import ExtensionsAlias, seed_work_dir
from kb_data.harness.channel import ChannelError
from kb_data.harness.reference import Stage, _outputs, compare, make_inputs
from kb_data.harness.flush_watch import FlushWatch, foreign_pages
from kb_data.harness.sampler import Sampler
from kb_data.harness.procfs import inner_id, schedstat_ms
from kb_data.harness.sandbox import Limits, Sandbox, Spawner, signal_each
from kb_data.io import lock_dir


EXIT_GRACE_S = 2.0  # the candidate's own exit before its tree is killed
PAUSE_RESCAN_EVERY = 4  # pauses (each covers a batch of the reference's timed calls)
FROZEN_EXIT_CPU_MS = 0.05  # CPU a frozen sandbox's cgroup may account in a pause in which a process of it ended
FROZEN_CPU_MS = 0.5  # in any other pause (honest: 0.000; 0.05 twice on a loaded CI host, BENCHMARKS)
QUEUE_WAIT_S = 0.05  # how long the judge waits for a timed batch to be queued before it opens the gate anyway
QUEUED = {"queued": True}
THREADS = ("forward", "aside")  # a CPU candidate's timing threads, whose clocks the judge reads (candidate.Aside)


def flag(res: dict, name: str, detail) -> None:
    res["flags"].append(name)
    res["flag_details"].setdefault(name, detail)


def _claim_or_zero(call) -> float:
    """A call's claimed ms where its reply is well formed (channel.field's float), else 0."""
    try:
        return channel.field(call, "ms", float) if isinstance(call, dict) else 0.0
    except ChannelError:
        return 0.0


class Candidate:
    """The judge's handle on the sandboxed process: commands out, validated replies in, slots for tensors."""

    def __init__(self, job: dict, res: dict):
        self.device = torch.device(job["device"])
        self.timeout_s = float(job.get("timeout_s", 600))
        self.deadline = timing._perf_counter() + self.timeout_s
        self.stage = "start"
        level = job.get("sandbox_level") or "process"
        limits = Limits(memory_bytes=int(job.get("memory_limit_bytes") or 8 << 30),
                        cpu_grading=self.device.type == "cpu")  # a CPU reference is timed beside its timers
        self.alias = ExtensionsAlias.take(job["build_key"], level) if job.get("build_key") else None
        self.sb = Sandbox(level, limits, job["device"], lock_dir(),
                          extra_env=({"TORCH_CUDA_ARCH_LIST": job["arch"]} if job.get("arch") else {})
                          | (self.alias.env if self.alias else {}))
        self.build_files = None  # (st_dev, st_ino) of the seeded build's loadable files
        if job.get("build_key"):  # extensions built before the GPU lock (harness/build.py)
            self.build_files = seed_work_dir(self.sb.work, job["build_key"], self.sb.uid, job["build_cache_root"])
            res["flag_details"]["build_cache"] = "miss" if self.build_files is None else "hit"
        if self.alias:
            self.alias.point_to(self.sb)
        self.code_since = time.time()  # files made after this, a build seeded above aside, are made at run time
        self.sb.start(candidate.serve, Spawner.of(candidate.serve))  # made as the worker started (grade.run_judge)
        self.arena = channel.SlotArena(self.device)
        self.sb.judge_files = self.arena.host_files
        self.tampered: list[str] = []
        self._pids = None
        self._pauses = 0
        self.gate_page = None  # a GPU candidate's gate (SlotArena.gate_page), once it has tried it
        self.gates = 1  # the last gate's number: each timed batch gets the next
        self.unfrozen_pauses = 0  # pauses whose cgroup freeze did not complete, or that had no cgroup to freeze
        self.unstopped_trees = 0  # pauses whose stop its first process did not report in time (Sandbox.signal_tree)
        self.freezes_ms: list[float] = []  # how long each cgroup freeze took to complete (or to give up)
        self.frozen_cpu = (0, 0.0)  # pauses in which the frozen sandbox's cgroup still ran, and the CPU ms it ran
        self.sampled: dict[str, dict] = {}  # per stage, the CPU time its batches spent in the framework's code
        self.sampler_error = None if self.device.type == "cpu" else "not on a CPU grading"
        self.flush_watch = None  # (pids, lo, hi): the timer's flush buffer on a CPU, found before the submission loaded
        self.flush_foreign = None  # (flag, why): what a timed batch's FlushWatch found, or the buffer not found at all
        self.outputs_watched = [0, 0]  # timed batches of several calls that a FlushWatch polled, and those whose
        # delivered outputs it read (a loaded host may leave its thread unrun for a whole batch): evidence
        self.last_round_trip_ms = 0.0  # the window a timed batch's flush watch draws its moments in
        self.thread_clocks = None  # a CPU candidate's timing threads' schedstat files, found before the submission loaded
        self.forward_pid = None  # ... and the process of its forward thread, the one that flushes
        self.thread_clock_lost = None  # why those clocks could not be read (found in no process, or unreadable since)
        self.res = res
        res["sandbox"] = level

    def watch_flush_buffer(self, reported) -> None:
        """The timer's CPU flush buffer as the candidate reported it in the calibration, before the submission
        loaded ([address, bytes]), in the process that runs the timed calls (watch_threads found it first): where it
        is private anonymous memory there, every timed batch's FlushWatch reads it. Another process of the sandbox
        whose memory at those addresses happens to be private and anonymous too (the strong sandbox's init, now and
        then) never flushes, and was once read as a batch that skipped its flushes. Not found, the check cannot run: a
        failure."""
        ok = isinstance(reported, list) and len(reported) == 2 and all(type(v) is int and v > 0 for v in reported)
        lo, hi = (reported[0], reported[0] + reported[1]) if ok else (0, 0)
        try:
            found = ok and self.forward_pid is not None and foreign_pages(self.forward_pid, lo, hi) is None
        except OSError:
            found = False
        if found:
            self.flush_watch = ([self.forward_pid], lo, hi)
        else:
            self.flush_foreign = ("check_failed", f"the timer's flush buffer ({reported!r:.80}) was not found in the "
                                                  "process that runs the timed calls before the submission loaded")

    def watch_threads(self, reported) -> None:
        """The threads the candidate runs its timed forwards ("forward") and the harness's copies around them ("aside")
        on, as it reported them in the calibration, before the submission loaded (thread ids in the sandbox's own pid
        namespace): found among the sandbox's tasks by their NSpid, their CPU clocks are what thread_cpu_ms() reads.
        Either found in none, the check cannot run: a failure."""
        tids = {name: reported.get(name) if isinstance(reported, dict) else None for name in THREADS}
        found: dict[str, str] = {}
        for pid in self.sb.pids() if all(type(t) is int and t > 0 for t in tids.values()) else []:
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for task in tasks:
                inner = inner_id(f"/proc/{pid}/task/{task}/status")
                found.update((name, f"/proc/{pid}/task/{task}/schedstat") for name, tid in tids.items() if inner == tid)
                if inner == tids["forward"]:
                    self.forward_pid = pid
        if len(found) == len(THREADS):
            self.thread_clocks = found
        else:
            self.thread_clock_lost = f"its timing threads ({reported!r:.80}) were not all found in the sandbox"

    def thread_cpu_ms(self) -> dict | None:
        """The CPU time so far of the candidate's timing threads by name (a CPU grading), or None without them; a
        clock that can no longer be read is kept as a failure."""
        if self.thread_clocks is None:
            return None
        try:
            return {name: schedstat_ms(path) for name, path in self.thread_clocks.items()}
        except (OSError, ValueError, IndexError) as e:
            self.thread_clock_lost = self.thread_clock_lost or f"a timing thread's clock could not be read ({e})"
            return None

    def flush_watcher(self, value: int, outputs: list[list]) -> FlushWatch | None:
        """A watch on the flush buffer (the batch's first flush value `value`), and on `outputs` (each call's output
        slots), for the next timed batch, where there is one."""
        clock = (self.thread_clocks or {}).get("forward")
        return FlushWatch(*self.flush_watch, within_ms=self.last_round_trip_ms, clock=clock, outputs=outputs,
                          value=value) if self.flush_watch else None

    def end_flush_watch(self, watch: FlushWatch | None, reply, calls: int, taken: list | None = None) -> None:
        """The batch's watch stopped, its flush values read back, the batch's calls weighted by their claims in its
        `reply` (zeros where there is none or it is not well formed: the bound and the record read it strictly), the
        outputs read at its polls held to those the judge took (`taken`, each call's); the first thing found is kept
        for the record."""
        got = reply.get("calls") if isinstance(reply, dict) else None
        claims = [_claim_or_zero(c) for c in got] if isinstance(got, list) else []
        found = watch.stop(claims if len(claims) == calls else [0.0] * calls, taken) if watch is not None else None
        if watch is not None and len(watch.outputs) > 1:
            self.outputs_watched[0] += 1
            self.outputs_watched[1] += bool(watch.output_reads)
        if found and self.flush_foreign is None:
            self.flush_foreign = ("timer_tampered", f"the timer's flush buffer, read in a timed batch: {found}")

    def sampling(self) -> Sampler | None:
        """A sampler for the next batch of timed calls, on a CPU grading where the kernel allows it."""
        return (Sampler(self.code_since, self.sb.inner_work, self.build_files, str(self.sb.work))
                if self.sampler_error is None else None)

    def add_samples(self, stage: str, sampler: Sampler | None, calls: int, cgroup_ms: float | None = None) -> None:
        """The batch's samples, added to its stage's account, with the sandbox cgroup's CPU time over the batch
        (`cgroup_ms`, None without a cgroup), which counts threads that started and ended unseen by the sampler."""
        if sampler is None:
            return
        try:
            got = sampler.stop(self.sb.pids())  # a process forked during the batch counts as a new thread
        except (OSError, ValueError, struct.error) as e:
            self.sampler_error = f"reading the samples: {e}"
            return
        acc = self.sampled.setdefault(stage, {"calls": 0, "functions": {}})
        if cgroup_ms is None:
            acc["cgroup_unavailable"] = True
        else:
            got["cgroup_ms"] = cgroup_ms
            acc.setdefault("unsampled_by_batch", []).append(round((cgroup_ms - got["cpu_ms"]) / max(calls, 1), 3))
        for key in ("functions", "installed_functions", "built_functions"):
            into = acc.setdefault(key, {})
            for name, ms in got.pop(key, {}).items():
                into[name] = into.get(name, 0.0) + ms
        acc["tampered"] = sorted(set(acc.get("tampered", [])) | set(got.pop("tampered", [])))
        for k, v in (("calls", calls), *got.items()):
            acc[k] = acc.get(k, 0) + v

    def request(self, msg: dict, stage: str, ready=None, queue_wait_s: float | None = None) -> dict:
        """Send a command and wait for its reply (within the job's time); a dead, silent or malformed
        candidate ends the grading with a status naming the stage. With `ready` (a timed batch behind the gate, or
        the profiled call): once the candidate says the batch is queued (its profiler runs), or after `queue_wait_s`
        (default QUEUE_WAIT_S: a forward that waits for the GPU cannot queue it all), ready(held) writes the batch's inputs (`held`: the
        batch said it was queued) and the gate opens."""
        self.stage = stage
        left = self.deadline - timing._perf_counter()
        if left <= 0:
            raise Stage("timeout", f"timed out in stage '{stage}': the job's {self.timeout_s:g} s ran out")
        try:
            ids, fds = self.arena.take_unsent()  # the memfds of slots this message names for the first time
            if ids:
                msg["_fds"] = ids
            channel.send(self.sb.sock, msg, fds)
            reply = None
            if ready is not None:
                first = self._queued(min(QUEUE_WAIT_S if queue_wait_s is None else queue_wait_s, left))
                if first is QUEUED or first is None:
                    ready(first is QUEUED)
                    self.open_gate(msg["gate"])
                else:
                    reply = first
            while reply is None or reply.get("queued") is True:  # a batch that said so after the gate opened
                if ready is not None and self.device.type == "cuda":
                    self._poll_until_readable()
                reply = channel.recv(self.sb.sock, timeout_s=max(self.deadline - timing._perf_counter(), 1e-3))
        except ChannelError as e:
            self._ended(stage, str(e))
        self.tampered += [t for t in channel.string_list(reply, "tampered", 64, 200) if t not in self.tampered] \
            if isinstance(reply.get("tampered"), list) else []
        if not channel.field(reply, "ok", bool):
            status = reply.get("status") if reply.get("status") in ("compile_error", "runtime_error") else "runtime_error"
            raise Stage(status, f"{stage}: " + str(reply.get("error") or "the candidate failed")[:4000])
        return reply

    def _poll_until_readable(self) -> None:
        """Wait for the candidate's reply to a GPU batch awake (channel.poll_readable) for up to AWAKE_WAIT_S, then
        leave it to recv(): the judge's clock would count its own wake-up as the calls of the loop's batches, whose
        no-work round trip was calibrated on short ones."""
        channel.poll_readable(self.sb.sock, min(self.deadline, timing._perf_counter() + channel.AWAKE_WAIT_S))

    def _queued(self, wait_s: float) -> dict | None:
        """QUEUED when the candidate said its batch is queued; None when it said nothing within `wait_s`; else its
        reply (the batch failed before it was queued)."""
        if not select.select([self.sb.sock], [], [], wait_s)[0]:
            return None
        first = channel.recv(self.sb.sock, timeout_s=1.0)
        return QUEUED if first.get("queued") is True else first

    def next_gate(self) -> int:
        """The number of the next timed batch's gate (the candidate's own try of it moved the page to 1)."""
        self.gates += 1
        return self.gates

    def open_gate(self, n: int) -> None:
        """The batch numbered `n` may read its inputs: on a GPU its stream runs on from the page's write."""
        if self.gate_page is not None:
            self.gate_page[0] = n
        channel.send(self.sb.sock, {"cmd": "go"})

    def _ended(self, stage: str, why: str):
        if self.sb.memory_exceeded:
            raise Stage("memory_exceeded", f"in stage '{stage}': {self.sb.memory_exceeded}")
        if "no message within" in why:
            self.sb.kill()
            raise Stage("timeout", f"timed out in stage '{stage}' ({why}, the end of the job's {self.timeout_s:g} s); "
                        "the sandbox was killed")
        code = self.sb.wait(5)
        how = ("is still running" if code is None else f"was killed by {signal.Signals(-code).name}" if code < 0
               else f"exited with code {code}")
        tail = self.sb.log_tail()
        raise Stage("crashed", f"the candidate's process {how} in stage '{stage}' ({why})"
                    + (f"\n--- candidate output (tail) ---\n{tail}" if tail else ""))

    def slot_inputs(self, inputs: list, prefix: str = "", sync: bool = True, write: bool = True) -> list:
        """Write inputs into the candidate's input slots (`prefix`: one set per call of a batch; `write=False`: only
        make the slots); the message part that names them."""
        out = []
        for j, x in enumerate(inputs):
            if isinstance(x, torch.Tensor):
                desc, t = self.arena.tensor(f"{prefix}in{j}", x.dtype, x.shape)
                if write:
                    t.copy_(x)
                out.append({"slot": desc.to_msg()})
            else:
                if not isinstance(x, (int, float, bool, str, type(None))):
                    raise Stage("runtime_error", f"input {j} of type {type(x).__name__} cannot be handed over")
                out.append({"value": x})
        if sync and self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return out

    def check_input_slots(self, inputs: list, prefix: str = "") -> None:
        """The judge's input slots must hold what it wrote, after every call, timed ones too: the candidate copies its
        inputs out of them, so a change is work done in the judge's memory (an output that is a second mapping of a
        slot shares no address with it)."""
        for j, x in enumerate(inputs):
            if isinstance(x, torch.Tensor) and f"{prefix}in{j}" in self.arena.slots:
                if not timing.bitwise_equal(self.arena.slots[f"{prefix}in{j}"][1], x):
                    flag(self.res, "output_aliases_input", f"the candidate wrote into the judge's input slot {j}")

    def out_slots(self, ref_out, prefix: str = "") -> list:
        descs = []
        for k, o in enumerate(_outputs(ref_out)):
            if isinstance(o, torch.Tensor):
                descs.append(self.arena.tensor(f"{prefix}out{k}", o.dtype, o.shape)[0].to_msg())
        return descs

    def outputs(self, reply: dict, ref_out, prefix: str = "") -> tuple[list | None, str | None]:
        """The candidate's outputs as private copies, or why they cannot be judged (structure, type, dtype)."""
        seen = channel.field(reply, "outputs", list, max_len=64)
        if reply.get("aliases_input") is True:  # every call's reply, timed ones too
            flag(self.res, "output_aliases_input", "the output shares storage with an input or the slot it came from")
        kinds = [str(info.get("type", "")) if isinstance(info, dict) else "" for info in seen]
        subclassed = [k.split(":", 1)[1] for k in kinds if k.startswith(("subclass:", "container:", "patched:"))]
        if subclassed:  # it can defer or fake the work until someone reads it
            why = (f"the output is (or holds) a subclass or a patched tensor ({subclassed[0][:100]}), not a plain "
                   "tuple, list or torch.Tensor")
            flag(self.res, "lazy_output", why)
            raise Stage("rejected", why)
        refs = _outputs(ref_out)
        if len(seen) != len(refs):
            return None, f"returned {len(seen)} outputs, expected {len(refs)}"
        outs = []
        for k, (info, r) in enumerate(zip(seen, refs)):
            where = f"output {k}: " if len(refs) > 1 else ""
            if not isinstance(info, dict):
                raise ChannelError("an output description must be an object")
            kind = channel.field(info, "type", str, max_len=200)
            if not isinstance(r, torch.Tensor):
                outs.append(None)
                continue
            if kind != "Tensor":
                return None, f"{where}expected a tensor, got {kind.removeprefix('other:')}"
            shape, dtype = channel.field(info, "shape", list, max_len=16), channel.field(info, "dtype", str, max_len=40)
            if shape != list(r.shape):
                return None, f"{where}shape {tuple(shape)}, expected {tuple(r.shape)}"
            if dtype != channel.dtype_name(r.dtype):
                return None, f"{where}dtype {dtype}, expected {channel.dtype_name(r.dtype)} (the reference's)"
            dev = channel.field(info, "device", str, max_len=40)
            if torch.device(dev) != self.device:
                return None, f"{where}on {dev}, expected {self.device}"
            outs.append(self.arena.slots[f"{prefix}out{k}"][1].clone())
        return outs, None

    def cpu_ms(self) -> float | None:
        """The sandbox's own CPU time so far on a CPU grading (its cgroup's account, which a loaded host does not
        inflate as it does the judge's wall clock); None on a GPU or without a cgroup."""
        if self.device.type != "cpu" or self.sb.cgroup is None:
            return None
        return self.sb.cgroup.cpu_ms()

    def settled_clocks(self) -> tuple[float | None, dict | None]:
        """cpu_ms() and thread_cpu_ms(), read with the sandbox paused on a grading that has thread clocks (a CPU
        one): a thread still on a CPU has up to a scheduler tick of CPU time that neither clock shows yet, where work
        done just before the reply hid (red team, session 35); paused, every thread has left its CPU and been charged."""
        if self.thread_clocks is None:
            return self.cpu_ms(), self.thread_cpu_ms()
        with self.paused():
            return self.cpu_ms(), self.thread_cpu_ms()

    @contextmanager
    def paused(self):
        """The sandbox's processes stopped while the judge times its reference: nothing of the submission's
        (a thread, a child) competes with it for the CPU. The process list (a /proc scan, milliseconds on a busy
        host) is refreshed every PAUSE_RESCAN_EVERY pauses. Where the sandbox has a cgroup, it is frozen instead:
        every process in it at once, those forked since the last pause included. The memory watcher holds off
        meanwhile: the judge's own process is then the one being timed."""
        with self.sb.watch_lock:
            yield from self._paused()

    def _paused(self):
        if self.sb.cgroup is not None:
            pause = self.sb.cgroup.pause()
            try:
                with pause:
                    yield
            finally:
                self.freezes_ms.append(pause.freeze_ms)
                if not pause.frozen:
                    self.unfrozen_pauses += 1
                if (pause.ran_ms or 0.0) > (FROZEN_EXIT_CPU_MS if pause.ended else FROZEN_CPU_MS):
                    self.frozen_cpu = (self.frozen_cpu[0] + 1, self.frozen_cpu[1] + pause.ran_ms)
            return
        if self.sb.signal_tree(stop=True):  # the whole tree at once, as a freezer would
            try:
                yield
            finally:
                if not self.sb.signal_tree(stop=False):
                    signal_each(self.sb.pids(), signal.SIGCONT)
            return
        self.unfrozen_pauses += 1
        self.unstopped_trees += self.sb.unacked_stop
        if self._pauses % PAUSE_RESCAN_EVERY == 0 or self._pids is None:
            self._pids = self.sb.pids()
        self._pauses += 1
        stopped = signal_each(self._pids, signal.SIGSTOP)
        try:
            yield
        finally:
            signal_each(stopped, signal.SIGCONT)
            if self.sb.unacked_stop:  # its first process's stop, late, would leave the tree stopped: continued after it
                self.sb.signal_tree(stop=False)

    def close(self, res: dict) -> None:
        try:
            if self.sb.alive() and self.sb.sock is not None:
                try:
                    channel.send(self.sb.sock, {"cmd": "exit"})
                    # killed while it exits, a strong sandbox's PID namespace takes seconds to go; left to exit, a
                    # fraction of one. Whatever is left after the grace is killed.
                    self.sb.wait(EXIT_GRACE_S)
                except (OSError, ChannelError):
                    pass
            res["peak_host_memory_bytes"] = self.sb.peak_rss
            if self.sb.memory_exceeded and res.get("status") in (None, "ok", "crashed", "runtime_error"):
                res["status"], res["error"] = "memory_exceeded", f"in stage '{self.stage}': {self.sb.memory_exceeded}"
        finally:
            self.sb.close()
            self.arena.close()
            if self.alias:
                self.alias.release()


def cpu_threads() -> int:
    return max(1, (os.cpu_count() or 2) // 2)


def draw_seed() -> int:
    return secrets.randbelow(2**31 - 2) + 1


def weight_slots(cand: Candidate, state: dict, prefix: str) -> list:
    out = []
    for k, (key, v) in enumerate(state.items()):
        desc, t = cand.arena.tensor(f"{prefix}{k}", v.dtype, v.shape)
        t.copy_(v.detach())
        out.append({"key": key, "slot": desc.to_msg()})
    if cand.device.type == "cuda":
        torch.cuda.synchronize(cand.device)
    return out


def judged(ref_out, outs, why, rules, atol, rtol, relative: bool = False) -> tuple[bool, str | None, float, float]:
    """The suite's comparison of the candidate's outputs with the reference's, or the structural reason they
    could not be compared: (passed, why not, max abs err, max rel err: NaN unless `relative`)."""
    if why is not None:
        return False, why, math.inf, math.inf
    return compare(ref_out, outs if len(outs) > 1 else outs[0], rules, atol, rtol, relative)


def run_candidate(cand: Candidate, inputs: list, ref_out, rng: int, stage: str, cmd: str = "forward"):
    """The candidate on `inputs` (written into its slots): (reply, private copies of its outputs or None, why not)."""
    msg = {"cmd": cmd, "inputs": cand.slot_inputs(inputs), "outputs": cand.out_slots(ref_out), "rng": rng}
    reply = cand.request(msg, stage)
    outs, why = cand.outputs(reply, ref_out)
    cand.check_input_slots(inputs)
    return reply, outs, why


def fresh_inputs(mod, device, ctx: dict | None = None) -> list:
    """Inputs under a secret seed nobody has seen; for a problem whose inputs ignore the seed, with noise added
    to its floating inputs so that no two calls share values."""
    inputs = make_inputs(mod, draw_seed(), device)
    if ctx and ctx.get("seed_independent"):
        g = torch.Generator(device=device).manual_seed(draw_seed())
        inputs = [x + 0.01 * x.std().clamp_min(1e-3) * torch.randn(x.shape, generator=g, device=device, dtype=x.dtype)
                  if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() > 1 else x for x in inputs]
    return inputs


# ---------------------------------------------------------------------------
# Timing: the candidate's calls timed in its process (claims), the reference's here, trial for trial


OFF_SCATTER_EVERY = 16384  # a scattered probe moves one value in this many (at least OFF_SCATTER_MIN per tensor)
OFF_SCATTER_MIN = 16


HEAVY_VALUES = 16  # values of each large floating input that a dominance probe multiplies (few: a sample misses them)
HEAVY_MIN_NUMEL = 1 << 16  # ... in inputs of at least this many values


def heavy_values(inputs: list, device, factor: float, seed: int) -> list:
    """The inputs with HEAVY_VALUES values of each large floating tensor, at places drawn from `seed`, multiplied by
    `factor` (signs and zeros kept: a domain such as a log's stays the reference's): where those few values decide a
    reduction's output, a kernel that samples or skips values cannot get it right."""
    g = torch.Generator(device=device).manual_seed(seed)
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() >= HEAVY_MIN_NUMEL:
            y = x.contiguous().clone()
            at = torch.randint(y.numel(), (HEAVY_VALUES,), generator=g, device=device)
            y.view(-1)[at] *= factor
            x = y
        out.append(x)
    return out


def off_distribution(inputs: list, device, scattered: bool = False) -> list:
    """The floating inputs taken off the suite's distribution by a secret draw: replaced by standard normal values
    x3, or (`scattered`) kept but for a few scattered values set to such draws, which a candidate's sample of a few
    hundred values rarely sees (a probe-aware one checked a sample's sign and was wrong everywhere else)."""
    g = torch.Generator(device=device).manual_seed(draw_seed())
    out = []
    for x in inputs:
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()):
            out.append(x)
        elif not scattered or not x.numel():
            out.append(torch.randn(x.shape, generator=g, device=device, dtype=x.dtype) * 3)
        else:
            y = x.contiguous().clone()
            flat, k = y.view(-1), min(x.numel(), max(OFF_SCATTER_MIN, x.numel() // OFF_SCATTER_EVERY))
            flat[torch.randint(flat.numel(), (k,), generator=g, device=device)] = (
                torch.randn(k, generator=g, device=device, dtype=x.dtype) * 3)
            out.append(y)
    return out
